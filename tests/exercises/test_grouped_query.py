"""grouped_query's own verdicts beyond the matrix: each planted bug's diagnosis, the vacuous function, correct code
against its own diagnosis, and the feedback naming the heads a tiled grouping pairs."""

import pytest
import torch
from conftest import SUBMISSIONS

from grader.exercises import EXERCISES
from grader.grading import diagnosis as D

GQA = SUBMISSIONS / "grouped_query"
RUBRIC = "grouped_query"
EX = EXERCISES[RUBRIC]

# sample -> the diagnosis it must get; [] where the maths is right and the failure lies elsewhere
NAMED = {
    "bug_tiled_heads.py": ["heads tiled"],
    "bug_expand_time_dim.py": ["time and heads mixed"],
    "bug_no_mask.py": ["no mask"],
    "bug_softmax_query_axis.py": ["softmax over queries"],
    "bug_exp_no_max.py": ["exp without max"],
    "bug_no_scaling.py": ["no scaling"],
    "bug_scale_by_d_model.py": ["scaled by sqrt(Hq * D)"],
    "bug_batch_mix.py": ["batch mixed"],
    "vacuous_causal_mean.py": ["causal mean"],
    "bug_group_count_for_size.py": [],  # right on the probes' Hq = 4, Hkv = 2 and 1: only Hkv == Hq breaks it
    "bug_inplace_scale.py": [],
    "bug_mask_on_cpu.py": [],
    "bug_detached.py": [],
    "bug_float32_weights.py": [],
    "bug_imports_reference.py": [],
}


def test_every_planted_bug_has_an_expected_diagnosis():
    assert {p.name for p in GQA.iterdir() if p.name.startswith(("bug_", "vacuous_"))} == set(NAMED)


@pytest.mark.parametrize("name", sorted(NAMED))
def test_planted_bug_gets_its_name(grade_of, name):
    assert grade_of(GQA / name, RUBRIC).diagnosis == NAMED[name]


def test_correct_code_gets_no_diagnosis_even_when_asked(grade_of):
    from grader.grading import rubric
    from grader.grading.engine import Grading

    g = Grading(GQA / "correct_hf_repeat_kv.py", rubric.load(RUBRIC))
    try:
        assert g.outcome("loads").status == "passed"
        assert D.diagnose(EX.variants, lambda q, k, v, **kw: g.subject.call(q, k, v, expect=EX.expect(q, k, v), **kw)[:2]) == []
    finally:
        g.close()


def test_variants_differ_from_each_other_on_the_probes():
    """Each single planted bug is told apart from the reference and from every other one."""
    seen = []
    for bugs in [frozenset()] + [frozenset([m]) for m in EX.variants.mistakes]:
        results = [EX.variants.plant(*x, **kw, bugs=bugs) for x, kw in EX.variants.probes()]
        for other, theirs in seen:
            assert not all(D.matches(a, b) for a, b in zip(results, theirs)), (bugs, other)
        seen.append((bugs, results))


def test_vacuous_function_scores_at_most_ten_percent(grade_of):
    assert grade_of(GQA / "vacuous_causal_mean.py", RUBRIC).score <= 10


def test_tiled_heads_feedback_names_both_heads(grade_of):
    by_id = {o.id: o for o in grade_of(GQA / "bug_tiled_heads.py", RUBRIC).outcomes}
    assert "query head 1 attends like key/value head 1, but it belongs to head 1 // 2 = 0" in by_id["repeat_kv_equivalent"].message
    assert "changing key/value head 0 changed query head 2" in by_id["kv_head_groups"].message
    assert "k, v of shape (1, 2, 2, 2)" in by_id["kv_head_groups"].message  # k's heads named apart from q's


def test_the_grouped_strategy_draws_what_it_says():
    from hypothesis import given, settings

    from grader.exercises.grouped_query import grouped

    @settings(max_examples=30, derandomize=True, database=None)
    @given(grouped(kv_heads=(1, 3), groups=(1, 3)))
    def shapes(x):
        q, k, v = x
        assert k.shape == v.shape and k.shape[:1] + k.shape[2:] == q.shape[:1] + q.shape[2:]
        assert q.shape[1] % k.shape[1] == 0 and 1 <= q.shape[1] // k.shape[1] <= 3

    shapes()
    q = torch.ones(2, 4, 3, 2)
    assert [t.shape for t in EX.device_inputs(q)[0]] == [q.shape, (2, 1, 3, 2), (2, 1, 3, 2)]
