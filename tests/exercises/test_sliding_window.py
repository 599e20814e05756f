"""sliding_window beyond the verdict matrix: each band bug named by the diagnosis, the band hatched in the heatmap,
the window in the replayed call, the signature the loader asks for, the pytest plugin. (correct_hf_masking_utils.py
names its window `sliding_window`: its full marks in the matrix show that the window travels by position.)"""

import pytest
import torch
from conftest import SUBMISSIONS

from grader.exercises import EXERCISES
from grader.grading import diagnosis as D

SW = SUBMISSIONS / "sliding_window"
RUBRIC = "sliding_window"
EX = EXERCISES[RUBRIC]
V = EX.variants

# sample -> the diagnosis it must get ([] where the maths is right and the failure lies elsewhere)
NAMED = {
    "bug_mistral_band.py": ["band one too wide"],
    "bug_band_too_narrow.py": ["band one too narrow"],
    "bug_symmetric_band.py": ["symmetric band"],
    "bug_band_wrong_side.py": ["band from the wrong side"],
    "bug_window_ignored.py": ["window ignored"],
    "bug_zero_fill.py": ["zero fill"],
    "bug_no_scaling.py": ["no scaling"],
    "bug_softmax_query_axis.py": ["softmax over queries"],
    "bug_inplace_scale.py": [],
}


@pytest.mark.parametrize("name", sorted(NAMED))
def test_each_bug_gets_its_name(grade_of, name):
    assert grade_of(SW / name, RUBRIC).diagnosis == NAMED[name]


def as_student(bugs):
    return lambda q, k, v, window: V.plant(q, k, v, window, bugs=frozenset(bugs))


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
