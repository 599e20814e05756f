"""The output-only path on every exercise that returns its weights: declared output-only (`results = (OUT,)`), the
same function returning its output alone fails exactly the checks that the (out, weights) version fails, since the
checks read the weights from the output (v the identity over the keys) and no weight property is skipped."""

import re
from dataclasses import replace

import pytest

from conftest import SUBMISSIONS, failed

from grader.exercises import EXERCISES
from grader.exercises.base import OUT
from grader.grading.engine import Grading
from grader.grading.rubric import load

CASES = {
    "chapter5": ["correct_basic.py", "bug_zero_fill.py", "bug_softmax_query_axis.py", "bug_no_scaling.py"],
    "sliding_window": ["correct_band_mask.py", "bug_mistral_band.py", "bug_zero_fill.py"],
    "prefix_lm": ["correct_block_fill.py", "bug_prefix_on_queries.py", "bug_softmax_query_axis.py"],
    "grouped_query": ["correct_repeat_interleave.py", "bug_tiled_heads.py", "bug_no_scaling.py"],
}
WRAPPER = """from original import {entry} as _f


def output_only(q, k, v, *args, **kw):
    return _f(q, k, v, *args, **kw)[0]
"""


@pytest.fixture
def output_only(monkeypatch, tmp_path):
    def rubric_for(exercise: str):
        name = f"{exercise}_output_only"
        monkeypatch.setitem(EXERCISES, name, replace(EXERCISES[exercise], name=name, results=(OUT,)))
        text = (SUBMISSIONS.parent / "rubrics" / f"{exercise}.toml").read_text()
        path = tmp_path / f"{name}.toml"
        text = re.sub(r"(?m)^entry_points = .*$", 'entry_points = ["output_only"]', text)
        path.write_text(text.replace(f'exercise = "{exercise}"', f'exercise = "{name}"', 1))
        return load(str(path))

    return rubric_for


@pytest.mark.parametrize("exercise, name", [(e, n) for e, names in CASES.items() for n in names])
def test_output_only_fails_what_out_and_weights_fail(grade_of, output_only, tmp_path, exercise, name):
    both = grade_of(SUBMISSIONS / exercise / name, exercise)
    folder = tmp_path / "hand_in"
    folder.mkdir()
    (folder / "original.py").write_text((SUBMISSIONS / exercise / name).read_text())
    entry = next(n for n in EXERCISES[exercise].entry_points if f"def {n}(" in (folder / "original.py").read_text())
    (folder / "attention.py").write_text(WRAPPER.format(entry=entry))
    alone = Grading(folder, output_only(exercise), planned=False).finish()
    assert failed(alone) == failed(both), [(o.id, o.message[:300]) for o in alone.outcomes if o.status == "failed"]
    assert alone.score == both.score


def test_a_failure_where_a_check_reads_the_weights_alone_is_said_on_the_inputs_drawn(grade_of):
    """A check that reads the weights alone asks an output-only function for them alone (v the identity over the
    keys: one call fewer); what such a call raises is said as the inputs drawn raise it, the inputs its case shows."""
    from grader.checks.format import shape_of

    grade = grade_of(SUBMISSIONS / "sdpa_mask" / "bug_mask_transposed.py", "sdpa_mask")
    (o,) = [o for o in grade.outcomes if o.id == "mask_respected"]  # a weights-only check; the out has the wrong shape
    drawn = shape_of(*o.case.args[:3]).split(" (T=")[0]
    assert o.status == "failed" and o.message.startswith(f"for {drawn} "), o.message


def test_a_check_that_reads_out_and_weights_asks_an_output_only_function_once(monkeypatch):
    """Where v may have a size of its own, one call with the identity over the keys beside v gives both (out = weights
    @ v, so [v | I] gives [out | weights]): each `ctx.call` of a grading is one call of the function."""
    from grader.checks.core import Ctx

    asked: list[int] = []
    call = Ctx.call

    def counted(self, *args, **kw):
        before = self.subject._calls
        got = call(self, *args, **kw)
        asked.append(self.subject._calls - before)
        return got

    monkeypatch.setattr(Ctx, "call", counted)
    grade = Grading(SUBMISSIONS / "sdpa_mask" / "correct_masked_fill.py", load("sdpa_mask")).finish()
    assert grade.score == grade.max_score and len(asked) > 50 and set(asked) == {1}


def test_a_failure_where_a_check_reads_out_and_weights_is_said_on_the_inputs_drawn(tmp_path):
    """What the one call with [v | I] raises is said as the inputs drawn raise it, not on v's wider stand-in."""
    from grader.checks.format import shape_of

    path = tmp_path / "attention.py"
    path.write_text((SUBMISSIONS / "sdpa_mask" / "correct_masked_fill.py").read_text().replace(
        "    scores = Q @", "    if Q.size(-2) == 3:\n        raise ValueError('three queries')\n    scores = Q @"))
    grade = Grading(path, load("sdpa_mask")).finish()
    (o,) = [o for o in grade.outcomes if o.id == "content_dependent"]  # its first call reads out and weights
    drawn = shape_of(*o.case.args[:3]).split(" (T=")[0]
    assert o.status == "failed" and o.message.startswith("your function raised ValueError: three queries for "), o.message
    assert f" for {drawn} (T=3, " in o.message, o.message
