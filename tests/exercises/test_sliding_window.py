"""sliding_window beyond the verdict matrix and the diagnosis (tests/grading/test_diagnose.py): the band hatched in
the heatmap, the window in the replayed call, the signature the loader asks for, the pytest plugin.
(correct_hf_masking_utils.py names its window `sliding_window`: its full marks in the matrix show that the window
travels by position.)"""

import pytest
import torch

from conftest import SUBMISSIONS

from grader.exercises import EXERCISES

SW = SUBMISSIONS / "sliding_window"
RUBRIC = "sliding_window"
EX = EXERCISES[RUBRIC]
def test_the_heatmap_hatches_the_band_of_the_failing_case(grade_of):
    from grader.reports.heatmap import heatmap, pictured

    o = pictured(grade_of(SW / "bug_mistral_band.py", RUBRIC))
    window, t = o.case.kw["window"], o.case.weights.shape[-1]
    i, j = torch.arange(t)[:, None], torch.arange(t)[None, :]
    hatched = EX.forbidden(*o.case.args, **o.case.kw)
    assert torch.equal(hatched, ~((j <= i) & (j > i - window)))
    assert (hatched & (j < i)).any()  # keys behind the window are hatched, not only the future
    assert heatmap(o, RUBRIC).startswith(b"\x89PNG")


def test_replay_prints_the_call_with_its_window(capsys):
    from grader.frontends.cli import main

    assert main(["replay", str(SW / "bug_mistral_band.py"), "--rubric", RUBRIC, "--check", "band_weights_zero"]) == 1
    out = capsys.readouterr().out
    assert "window = 1\nresult = sliding_window_attention(q, k, v, window)" in out  # by position, as the grader calls it
    assert "outside its window of 1" in out


def test_the_window_reaches_a_parameter_of_any_name(grade_of):
    path = SW / "correct_hf_masking_utils.py"
    assert "def sliding_window_attention(q, k, v, sliding_window):" in path.read_text()
    assert grade_of(path, RUBRIC).score == 100


def test_a_function_without_a_window_is_refused_when_loaded(tmp_path):
    from grader.submission.loader import read
    from grader.submission.source import LoadError

    path = tmp_path / "sub.py"
    path.write_text("def sliding_window_attention(q, k, v):\n    return q, q\n")
    with pytest.raises(LoadError, match=r"cannot be called as sliding_window_attention\(q, k, v, window\)"):
        read(path, EX.entry_points, EX.inputs)


def test_pytest_plugin_grades_with_the_sliding_window_rubric(pytester):
    result = pytester.runpytest_subprocess("--submission", str(SW / "bug_window_ignored.py"), "--rubric", RUBRIC, "-v")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*band_weights_zero FAILED*", "*outside its window*", "Total: 55/100"])
