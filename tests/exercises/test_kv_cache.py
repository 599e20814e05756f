"""kv_cache's own verdicts beyond the matrix and the diagnosis (tests/grading/test_diagnose.py): the forbidden region
after a past, the heatmap and replay of a case with a cache, and the pytest plugin."""

import torch

from conftest import SUBMISSIONS

from grader.exercises import EXERCISES

KV = SUBMISSIONS / "kv_cache"
RUBRIC = "kv_cache"
EX = EXERCISES[RUBRIC]

def test_forbidden_region_and_shapes_follow_the_past():
    q, k, v = (torch.zeros(2, 1, 3, 4) for _ in range(3))
    cache = (torch.zeros(2, 1, 2, 4), torch.zeros(2, 1, 2, 4))
    assert torch.equal(EX.forbidden(q, k, v, cache=cache), torch.ones(3, 5, dtype=torch.bool).triu(3))  # j > 2 + i
    assert torch.equal(EX.forbidden(q, k, v), torch.ones(3, 3, dtype=torch.bool).triu(1))
    assert EX.expect(q, k, v, cache=cache) == [(2, 1, 3, 4), (2, 1, 3, 5), (2, 1, 5, 4), (2, 1, 5, 4)]


def failing_outcome(name: str, check: str):
    from grader.grading import rubric
    from grader.grading.engine import Grading

    g = Grading(KV / name, rubric.load(RUBRIC))
    try:
        return g.outcome(check), g.subject.entry
    finally:
        g.close()


def test_replay_rebuilds_the_failing_chunk_with_its_cache():
    """The printed inputs, pasted beside the submission, give the very weights the case shows."""
    from grader.frontends import replay

    o, entry = failing_outcome("bug_no_mask_with_cache.py", "chunk_after_past")
    assert o.status == "failed" and "cache" in o.case.kw
    lines = replay.inputs(o.case, entry)
    assert lines[-1] == f"result = {entry}(q, k, v, cache=({replay.literal(o.case.kw['cache'][0])}, {replay.literal(o.case.kw['cache'][1])}))"
    space: dict = {"torch": torch}
    exec((KV / "bug_no_mask_with_cache.py").read_text(), space)
    exec("\n".join(lines), space)
    assert torch.equal(space["result"][1], o.case.weights)


def test_heatmap_hatches_the_chunks_own_future():
    from grader.reports import heatmap

    o, _ = failing_outcome("bug_mask_top_left.py", "chunk_after_past")
    p = o.case.kw["cache"][0].shape[-2]
    t_new = o.case.args[0].shape[-2]
    assert o.case.weights.shape[-2:] == (t_new, p + t_new)
    assert torch.equal(EX.forbidden(*o.case.args, **o.case.kw), torch.ones(t_new, p + t_new, dtype=torch.bool).triu(p + 1))
    assert heatmap.heatmap(o, RUBRIC).startswith(b"\x89PNG")


def test_pytest_plugin_grades_with_the_kv_cache_rubric(pytester):
    path = KV / "bug_mask_top_left.py"
    result = pytester.runpytest_subprocess("--submission", str(path), "--rubric", RUBRIC, "-v")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*decode_matches_full FAILED*", "*aligned to the top-left*", "Total: 82/100"])
    assert "cache_returned PASSED" in result.stdout.str()
