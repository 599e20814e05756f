"""The example plan: recorded once on the reference, replayed instead of hypothesis, and never trusted blindly.
(That it changes no grade of any sample is tests/exercises/test_verdicts.py::test_the_example_plan_changes_nothing.)"""

import pytest

from conftest import CH5_DIR, identical

from grader.checks.draws import Draws
from grader.grading import plan
from grader.grading.engine import Grading
from grader.grading.rubric import load


def calls(path, planned: bool) -> tuple[int, dict]:
    grading = Grading(path, load("chapter5"), planned=planned)
    grade = grading.finish()
    return grading.subject._calls, grade.as_dict()


@pytest.mark.parametrize("name", ["correct_basic.py", "bug_zero_fill.py", "bug_mask_cached_by_T.py"])
def test_the_worker_sees_the_same_calls_with_and_without_the_plan(name):
    """A check that fails on a planned example hands the calls it made to hypothesis, which does not repeat them:
    a function that keeps state between calls, or draws random numbers, sees exactly what it saw without a plan."""
    assert calls(CH5_DIR / name, planned=True) == calls(CH5_DIR / name, planned=False)


def test_a_plan_is_recorded_once_and_kept_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_GRADER_CACHE", str(tmp_path))
    monkeypatch.setattr(plan, "_plans", {})
    rubric = load("chapter5")
    recorded = []
    first = plan.get(rubric, Draws(), lambda: recorded.append(1) or {"output_shape": []})
    monkeypatch.setattr(plan, "_plans", {})  # a new grader process
    again = plan.get(rubric, Draws(), lambda: recorded.append(1) or {})
    assert first == again == {"output_shape": []} and recorded == [1]
    assert [p.suffix for p in tmp_path.glob("chapter5-*.pt")] == [".pt"]


@pytest.mark.parametrize("where", ["ATTENTION_GRADER_CACHE", "the default, left open by an older grader"])
def test_plans_are_kept_where_only_their_user_can_read_them(tmp_path, monkeypatch, where):
    """Plans drawn under a course secret are examples no student may know: a folder of 0700, files of 0600."""
    import os
    import stat

    monkeypatch.setattr(plan, "_plans", {})
    if where == "ATTENTION_GRADER_CACHE":
        folder = tmp_path / "cache" / "plans"
        monkeypatch.setenv("ATTENTION_GRADER_CACHE", str(folder))
    else:
        monkeypatch.delenv("ATTENTION_GRADER_CACHE", raising=False)
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        folder = tmp_path / "xdg" / "attention-grader" / "plans"
        folder.mkdir(parents=True, mode=0o755)
        folder.chmod(0o755)
    old = os.umask(0o022)
    try:
        plan.get(load("chapter5"), Draws(b"secret"), lambda: {"output_shape": []})
    finally:
        os.umask(old)
    assert plan.folder() == folder
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    files = sorted(folder.iterdir())
    assert [p.suffix for p in files] == [".lock", ".pt"]
    assert {stat.S_IMODE(p.stat().st_mode) for p in files} == {0o600}


def test_an_unreadable_plan_is_recorded_again(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_GRADER_CACHE", str(tmp_path))
    monkeypatch.setattr(plan, "_plans", {})
    rubric = load("chapter5")
    (tmp_path / f"{plan.key(rubric, Draws())}.pt").write_bytes(b"not a plan")
    assert plan.get(rubric, Draws(), lambda: {"loads": []}) == {"loads": []}


def test_a_cache_that_cannot_be_written_still_grades(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setenv("ATTENTION_GRADER_CACHE", str(blocked / "plans"))  # under a file: mkdir fails
    monkeypatch.setattr(plan, "_plans", {})
    grade = Grading(CH5_DIR / "bug_no_mask.py", load("chapter5")).finish()
    assert {o.id for o in grade.outcomes if o.status == "failed"} >= {"future_weights_zero"}


def test_the_key_changes_with_the_rubric_and_the_draws():
    rubric = load("chapter5")
    other = rubric.model_copy(update={"hypothesis": rubric.hypothesis.model_copy(update={"max_examples": 5})})
    assert plan.key(rubric, Draws()) != plan.key(other, Draws())
    keys = {plan.key(rubric, d) for d in (Draws(), Draws(b"secret"), Draws(b"other"))}
    assert len(keys) == 3 and not any("secret" in k for k in keys)


def test_a_replay_hands_over_when_an_example_is_rejected_otherwise_than_on_the_reference():
    """Hypothesis draws each example from how the ones before ended: a replay whose rejections (`assume`) differ
    from the reference's is not the run hypothesis would make, so hypothesis makes it."""
    from hypothesis import assume, strategies as st

    from grader.checks.core import Ctx
    from grader.checks.replay import Replay
    from grader.exercises import EXERCISES

    def ctx(**kw) -> Ctx:
        return Ctx(subject=None, exercise=EXERCISES["chapter5"], tolerances={}, max_examples=10, replay=Replay(**kw))

    def prop(unlike: int, met: list):
        def example(x):
            met.append(x)
            assume(x % 3 != unlike)
        return example

    recorder = ctx(recording=[])
    recorder.prove(st.integers(0, 100), prop(0, []))
    planned = recorder.replay.recording
    assert any(rejected for *_, rejected in planned[0][1]) and not all(rejected for *_, rejected in planned[0][1])
    same, other, fresh = [], [], []
    ctx(plan=planned).prove(st.integers(0, 100), prop(0, same))
    ctx(plan=planned).prove(st.integers(0, 100), prop(1, other))
    ctx().prove(st.integers(0, 100), prop(1, fresh))  # what hypothesis draws for it without a plan
    assert same == [x for args, kw, _ in planned[0][1] for x in (*args, *kw.values())]  # replayed, and that was all
    first = next(i for i, x in enumerate(same) if (x % 3 == 0) != (x % 3 == 1))  # where the rejections differ
    assert other == same[: first + 1] + fresh  # the replay stopped there, and hypothesis ran from its first example


def test_code_that_handles_only_some_forms_replays_a_plan_drawn_within_them(hypothesis_runs):
    """nanoGPT's attention handles 4-D inputs only, so its checks draw within those forms: it replays a plan recorded
    on the reference held to the same forms (kept under a key of its own), hypothesis runs for none of its checks,
    and the examples are those hypothesis meets without a plan."""
    runs = hypothesis_runs
    path, rubric = CH5_DIR / "limited_nanogpt.py", load("chapter5")
    Grading(path, rubric).finish()  # records the plan, unless this run already has (hypothesis draws it)
    runs.clear()
    fast = Grading(path, rubric)
    fast.finish()
    assert fast.reach is not None and fast.reach.works and fast.reach.fails  # 3-D inputs fail
    works = tuple(fast.reach.works)
    assert runs == [] and plan.key(rubric, fast.draws, works) != plan.key(rubric, fast.draws)
    slow = Grading(path, rubric, planned=False)
    slow.recorded = {}
    slow.finish()
    drawn = {cid: examples for cid, examples in slow.recorded.items() if examples}  # output_shape fails before drawing
    assert runs and len(drawn) > 5 and identical(drawn, {cid: fast.plan[cid] for cid in drawn})
