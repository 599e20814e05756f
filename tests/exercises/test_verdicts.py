"""The verdict matrix, one for every exercise: every sample submission in submissions/<exercise>/ fails exactly the
checks its bug breaks and says why (verdicts_<exercise>.py), every correct variant (our own `correct_*` and wrapped
public code, `public_*`) scores full marks, a limitation of layout or dtype alone (`limited_*`) loses only the
output_shape points, and every check of the exercise's bundled rubric fails on some sample."""

import importlib

import pytest
from conftest import SUBMISSIONS, assert_every_check_can_fail, assert_fails_exactly, assert_full_marks

from grader.exercises import EXERCISES


def expected(exercise: str) -> dict:
    return importlib.import_module(f"verdicts_{exercise}").EXPECTED


def samples(exercise: str, prefixes: tuple[str, ...]) -> list[str]:
    return sorted(p.name for p in (SUBMISSIONS / exercise).iterdir() if p.name.startswith(prefixes))


CORRECT = [(e, name) for e in EXERCISES for name in samples(e, ("correct_", "public_"))]
LIMITED = [(e, name) for e in EXERCISES for name in samples(e, ("limited_",))]
BUGS = [(e, name) for e in EXERCISES for name in sorted(expected(e))]


@pytest.mark.parametrize("exercise", sorted(EXERCISES))
def test_every_sample_is_in_the_matrix(exercise):
    assert set(samples(exercise, ("bug_", "vacuous_", "limited_"))) == set(expected(exercise))
    assert len(samples(exercise, ("correct_",))) >= 3


@pytest.mark.parametrize("exercise, name", CORRECT)
def test_correct_variant_scores_full_marks(grade_of, exercise, name):
    assert_full_marks(grade_of(SUBMISSIONS / exercise / name, exercise))


@pytest.mark.parametrize("exercise, name", LIMITED)
def test_limitation_costs_only_its_points(grade_of, exercise, name):
    grade = grade_of(SUBMISSIONS / exercise / name, exercise)
    lost = {o.id: o.max_points for o in grade.outcomes if o.status == "failed"}
    assert set(lost) == {"output_shape"}, lost
    assert grade.score == grade.max_score - lost["output_shape"] >= 75


@pytest.mark.parametrize("exercise, name", BUGS)
def test_bug_fails_exactly_what_it_breaks(grade_of, exercise, name):
    assert_fails_exactly(grade_of(SUBMISSIONS / exercise / name, exercise), *expected(exercise)[name])


@pytest.mark.parametrize("exercise", sorted(EXERCISES))
def test_every_check_in_the_rubric_can_fail(exercise):
    assert_every_check_can_fail(expected(exercise), exercise)
