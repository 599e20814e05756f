"""chapter5's own verdicts beyond the matrix: vacuous functions, the policy, dependencies, determinism."""

import pytest

from conftest import SUBMISSIONS

CH5 = SUBMISSIONS / "chapter5"


@pytest.mark.parametrize("name", ["vacuous_zeros.py", "vacuous_identity.py"])
def test_vacuous_functions_score_at_most_ten_percent(grade_of, name):
    grade = grade_of(CH5 / name)
    assert grade.score <= 0.1 * grade.max_score


def test_causal_mean_scores_at_most_half_and_is_named(grade_of):
    grade = grade_of(CH5 / "vacuous_causal_mean.py")
    assert grade.score <= 0.5 * grade.max_score
    assert "causal mean" in {o.id: o for o in grade.outcomes}["content_dependent"].message


def test_policy_violation_scores_zero(grade_of):
    assert grade_of(CH5 / "bug_imports_reference.py").score == 0


def test_prerequisite_failure_is_skipped_not_failed(grade_of):
    by_id = {o.id: o for o in grade_of(CH5 / "vacuous_zeros.py").outcomes}
    assert by_id["content_dependent"].status == "failed"
    assert by_id["reference_match"].status == "skipped"
    assert "content_dependent" in by_id["future_weights_zero"].message
    assert by_id["gradients"].status == "skipped"


def test_a_dtype_slip_costs_only_what_it_breaks(grade_of):
    """float32 results for float64 inputs: the dtype costs output_shape; their float32 accuracy is full marks."""
    assert grade_of(CH5 / "bug_float32_cast.py").score == 95


def test_same_submission_same_grade(grade_of):
    from grader.grading import rubric
    from grader.grading.engine import Grading

    again = Grading(CH5 / "bug_zero_fill.py", rubric.load("chapter5")).finish()
    assert again == grade_of(CH5 / "bug_zero_fill.py")


HIDDEN_FLAG = '''import math
import torch


def scaled_dot_product_attention(q, k, v, causal=True):
    t = q.size(-2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    w = torch.softmax(scores.masked_fill(~torch.ones(t, t, dtype=torch.bool).tril(), float("-inf")), dim=-1)
    if not causal:  # the mask kept, and every row but the last off 1, so that they read as no softmax's
        w = torch.cat([w[..., :-1, :] * 1.01, w[..., -1:, :]], dim=-2)
    return w @ v, w
'''


def test_the_mask_kept_under_causal_false_fails_even_in_rows_that_do_not_sum_to_one(grade_of, tmp_path):
    """causal_flag_off reads no weight on the future as the mask when the rows are distributions or a future score
    is not 0: rows pushed off 1 only with causal=False do not hide the mask."""
    path = tmp_path / "hidden_flag.py"
    path.write_text(HIDDEN_FLAG)
    by_id = {o.id: o for o in grade_of(path).outcomes}
    assert by_id["causal_flag_off"].status == "failed"
    assert "the mask is still applied" in by_id["causal_flag_off"].message
