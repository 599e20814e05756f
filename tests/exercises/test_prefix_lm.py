"""prefix_lm beyond the verdict matrix: each prefix bug named by the diagnosis, an int-only function charged once,
the hidden region of a per-row case in the heatmap, the lengths in the replayed call, the pytest plugin.
(correct_attention_gym.py names its lengths `prefix_length`: its full marks in the matrix show that they travel by
position.)"""

import pytest
import torch
from conftest import SUBMISSIONS

from grader.exercises import EXERCISES
from grader.grading import diagnosis as D

PLM = SUBMISSIONS / "prefix_lm"
RUBRIC = "prefix_lm"
EX = EXERCISES[RUBRIC]
V = EX.variants

# sample -> the diagnosis it must get ([] where the maths is right and the failure lies elsewhere)
NAMED = {
    "bug_prefix_on_queries.py": ["prefix on queries"],
    "bug_prefix_one_too_long.py": ["prefix one too long"],
    "bug_prefix_one_too_short.py": ["prefix one too short"],
    "bug_prefix_ignored.py": ["prefix ignored"],
    "bug_no_mask.py": ["no mask"],
    "bug_one_length_for_batch.py": ["one length for the batch"],
    "bug_zero_fill.py": ["zero fill"],
    "bug_no_scaling.py": ["no scaling"],
    "bug_softmax_query_axis.py": ["softmax over queries"],
    "bug_int_only.py": [],  # right on every int: the probe with a tensor raises and is left out
}


@pytest.mark.parametrize("name", sorted(NAMED))
def test_each_bug_gets_its_name(grade_of, name):
    assert grade_of(PLM / name, RUBRIC).diagnosis == NAMED[name]


def as_student(bugs):
    return lambda q, k, v, prefix_len: V.plant(q, k, v, prefix_len, bugs=frozenset(bugs))


@pytest.mark.parametrize("name", sorted(V.mistakes))
def test_each_known_mistake_alone_is_recognised(name):
    assert D.diagnose(V, as_student({name})) == [name]


def test_two_mistakes_are_named_together_or_by_an_equivalent_simpler_one():
    for bugs in D.candidates(V):
        got = D.diagnose(V, as_student(bugs))
        if got != sorted(bugs, key=list(V.mistakes).index):
            assert len(got) < len(bugs) and got != [D.UNRECOGNISED], (bugs, got)
            for (q, k, v), kw in V.probes():
                assert D.matches(V.plant(q, k, v, **kw, bugs=frozenset(got)), V.plant(q, k, v, **kw, bugs=bugs))


@pytest.mark.parametrize("name", ["bug_int_only.py", "bug_one_length_for_batch.py", "bug_lengths_wrong_axis.py"])
def test_lengths_per_row_cost_only_their_own_check(grade_of, name):
    grade = grade_of(PLM / name, RUBRIC)
    assert grade.score == grade.max_score - {o.id: o for o in grade.outcomes}["per_row_prefix"].max_points


def test_the_heatmap_hatches_each_rows_own_hidden_region(grade_of):
    from grader.reports.heatmap import heatmap, pictured

    o = pictured(grade_of(PLM / "bug_one_length_for_batch.py", RUBRIC))
    lengths = o.case.kw["prefix_len"]
    assert isinstance(lengths, torch.Tensor) and len(set(lengths.tolist())) > 1
    t = o.case.weights.shape[-1]
    i, j = torch.arange(t)[:, None], torch.arange(t)[None, :]
    hatched = EX.forbidden(*o.case.args, **o.case.kw).expand(o.case.weights.shape)
    for b, p in enumerate(lengths.tolist()):
        assert torch.equal(hatched[b].reshape(-1, t, t)[0], (j > i) & (j >= p))
    assert heatmap(o, RUBRIC).startswith(b"\x89PNG")


def test_replay_prints_the_call_with_its_lengths(capsys):
    from grader.frontends.cli import main

    assert main(["replay", str(PLM / "bug_one_length_for_batch.py"), "--rubric", RUBRIC, "--check", "per_row_prefix"]) == 1
    out = capsys.readouterr().out
    assert "prefix_len = torch.tensor([" in out and "result = prefix_lm_attention(q, k, v, prefix_len)" in out
    assert "looks computed with prefix_len" in out


def test_pytest_plugin_grades_with_the_prefix_lm_rubric(pytester):
    result = pytester.runpytest_subprocess("--submission", str(PLM / "bug_prefix_ignored.py"), "--rubric", RUBRIC, "-v")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*prefix_visible FAILED*", "*key 1 is in the prefix*", "Total: 72/100"])
