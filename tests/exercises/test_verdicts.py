"""The verdict matrix, one for every exercise: every sample submission in submissions/<exercise>/ fails exactly the
checks its bug breaks and says why (verdicts_<exercise>.py), every correct variant (our own `correct_*` and wrapped
public code, `public_*`) scores full marks, a limitation of layout or dtype alone (`limited_*`) loses only the
output_shape points, and every check of the exercise's bundled rubric fails on some sample."""

import importlib

import pytest

from conftest import (
    SUBMISSIONS,
    assert_every_check_can_fail,
    assert_fails_exactly,
    assert_full_marks,
    failed,
    identical,
)

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
def test_hypothesis_meets_exactly_the_plans_examples_where_a_check_passes(exercise):
    """The plan's premise, on every exercise's strategies: without the plan, hypothesis meets a submission that
    passes a check with exactly the examples it met on the reference, which the plan recorded. It draws each example
    from the ones before and how they ended, so a check that passes or rejects (`assume`) every planned example as the
    reference did (Ctx.prove replays them and makes sure) meets no other; that is why a replay settles it."""
    from grader.grading.engine import Grading
    from grader.grading.rubric import load

    path, rubric = SUBMISSIONS / exercise / samples(exercise, ("correct_",))[0], load(exercise)
    grading = Grading(path, rubric, planned=False)
    grading.recorded = {}
    assert_full_marks(grading.finish())
    planned = Grading(path, rubric).plan  # what a planned grading replays
    assert grading.recorded.keys() == planned.keys() and identical(grading.recorded, planned)


@pytest.mark.parametrize("exercise, name", BUGS)
def test_the_example_plan_changes_nothing(grade_of, exercise, name):
    """Replaying the plan gives the grade, word for word, and the counterexamples (the heatmaps' tensors) that
    hypothesis gives without it. The checks that pass, the replay settles as hypothesis would (above); each check that
    fails is graded again by hypothesis alone, from its first example, without the replay's calls remembered."""
    from grader.grading.engine import Grading
    from grader.grading.rubric import load

    path = SUBMISSIONS / exercise / name
    fast = grade_of(path, exercise)
    grading = Grading(path, load(exercise))
    grading.plan = {cid: p for cid, p in grading.plan.items() if cid not in failed(fast)}
    slow = grading.finish()
    assert fast.as_dict() == slow.as_dict()
    def cases(g):
        return [o.case and (o.case.args, o.case.kw, o.case.weights, o.case.expected) for o in g.outcomes]
    assert identical(cases(fast), cases(slow))


@pytest.mark.parametrize("exercise", sorted(EXERCISES))
def test_every_check_in_the_rubric_can_fail(exercise):
    assert_every_check_can_fail(expected(exercise), exercise)
