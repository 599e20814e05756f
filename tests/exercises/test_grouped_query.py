"""grouped_query's own verdicts beyond the matrix and the diagnosis (tests/grading/test_diagnose.py): the vacuous
function, the feedback naming the heads a tiled grouping pairs, the strategies."""

import torch

from conftest import SUBMISSIONS

from grader.exercises import EXERCISES

GQA = SUBMISSIONS / "grouped_query"
RUBRIC = "grouped_query"
EX = EXERCISES[RUBRIC]

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
