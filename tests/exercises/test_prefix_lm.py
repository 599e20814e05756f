"""prefix_lm beyond the verdict matrix and the diagnosis (tests/grading/test_diagnose.py): an int-only function
charged once, the hidden region of a per-row case in the heatmap, the lengths in the replayed call, the pytest plugin.
(correct_attention_gym.py names its lengths `prefix_length`: its full marks in the matrix show that they travel by
position.)"""

import pytest
import torch

from conftest import SUBMISSIONS

from grader.exercises import EXERCISES

PLM = SUBMISSIONS / "prefix_lm"
RUBRIC = "prefix_lm"
EX = EXERCISES[RUBRIC]
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
