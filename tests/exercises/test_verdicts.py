"""The verdict matrix, one for every exercise: every sample submission in submissions/<exercise>/ fails exactly the
checks its bug breaks and says why (verdicts_<exercise>.py), every correct variant scores full marks, and every
check of the exercise's bundled rubric fails on some sample."""

import importlib

import pytest
from conftest import SUBMISSIONS, assert_every_check_can_fail, assert_fails_exactly, assert_full_marks

from grader.exercises import EXERCISES


def expected(exercise: str) -> dict:
    return importlib.import_module(f"verdicts_{exercise}").EXPECTED


def samples(exercise: str, prefixes: tuple[str, ...]) -> list[str]:
    return sorted(p.name for p in (SUBMISSIONS / exercise).iterdir() if p.name.startswith(prefixes))


CORRECT = [(e, name) for e in EXERCISES for name in samples(e, ("correct_",))]
BUGS = [(e, name) for e in EXERCISES for name in sorted(expected(e))]


@pytest.mark.parametrize("exercise", sorted(EXERCISES))
def test_every_sample_is_in_the_matrix(exercise):
    assert set(samples(exercise, ("bug_", "vacuous_"))) == set(expected(exercise))
    assert len(samples(exercise, ("correct_",))) >= 3


@pytest.mark.parametrize("exercise, name", CORRECT)
def test_correct_variant_scores_full_marks(grade_of, exercise, name):
    assert_full_marks(grade_of(SUBMISSIONS / exercise / name, exercise))


@pytest.mark.parametrize("exercise, name", BUGS)
def test_bug_fails_exactly_what_it_breaks(grade_of, exercise, name):
    assert_fails_exactly(grade_of(SUBMISSIONS / exercise / name, exercise), *expected(exercise)[name])


@pytest.mark.parametrize("exercise", sorted(EXERCISES))
def test_every_check_in_the_rubric_can_fail(exercise):
    assert_every_check_can_fail(expected(exercise), exercise)
