"""kv_cache's own verdicts beyond the matrix: each planted bug's diagnosis, the forbidden region after a past, the
heatmap and replay of a case with a cache, and the pytest plugin."""

import pytest
import torch
from conftest import SUBMISSIONS

from grader.exercises import EXERCISES
from grader.grading import diagnosis as D

KV = SUBMISSIONS / "kv_cache"
RUBRIC = "kv_cache"
EX = EXERCISES[RUBRIC]

# sample -> the diagnosis it must get; [] where the attention is right and the failure lies elsewhere (the cache)
NAMED = {
    "bug_mask_top_left.py": ["mask top-left"],
    "bug_no_mask_with_cache.py": ["no mask with a cache"],
    "bug_cat_order.py": ["new keys first"],
    "bug_zero_fill.py": ["zero fill"],
    "bug_softmax_query_axis.py": ["softmax over queries"],
    "bug_exp_no_max.py": ["exp without max"],
    "bug_no_scaling.py": ["no scaling"],
    "bug_batch_mix.py": ["batch mixed"],
    "vacuous_causal_mean.py": ["causal mean"],
    "bug_cat_wrong_dim.py": [],  # every probe with a cache raises or returns the wrong shape: nothing to compare
    "bug_cache_new_only.py": [],
    "bug_cache_rolled_in_place.py": [],
    "bug_inplace_scale.py": [],
    "bug_mask_on_cpu.py": [],
    "bug_detached.py": [],
    "bug_float32_weights.py": [],
    "bug_imports_reference.py": [],
}


def test_every_planted_bug_has_an_expected_diagnosis():
    assert {p.name for p in KV.iterdir() if p.name.startswith(("bug_", "vacuous_"))} == set(NAMED)


@pytest.mark.parametrize("name", sorted(NAMED))
def test_planted_bug_gets_its_name(grade_of, name):
    assert grade_of(KV / name, RUBRIC).diagnosis == NAMED[name]


def test_variants_differ_from_each_other_on_the_probes():
    seen = []
    for bugs in [frozenset()] + [frozenset([m]) for m in EX.variants.mistakes]:
        results = [EX.variants.plant(*x, **kw, bugs=bugs) for x, kw in EX.variants.probes()]
        for other, theirs in seen:
            assert not all(D.matches(a, b) for a, b in zip(results, theirs)), (bugs, other)
        seen.append((bugs, results))


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
