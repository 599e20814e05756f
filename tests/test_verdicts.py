"""The verdict matrix: every sample submission fails exactly the checks its bug breaks, and says why."""

import pytest
from conftest import SUBMISSIONS, assert_every_check_can_fail, assert_fails_exactly, assert_full_marks

CH5 = SUBMISSIONS / "chapter5"
MASK = {"future_weights_zero", "mask_fill_value", "future_invariance", "reference_match"}
SCALE = {"sqrt_scaling", "reference_match"}

# file -> (checks that must fail, words the feedback of those failures must contain)
EXPECTED = {
    "bug_zero_fill.py": (MASK, ["-inf", "0"]),
    "bug_fill_neg1e4.py": ({"mask_fill_value"}, ["-1e4", "score[0, 0] = -1."]),  # a finite fill, only larger
    "bug_additive_neg1e4.py": ({"mask_fill_value"}, ["-1e4", "the masked score[0, 1] = 1."]),
    "bug_notebook_zero_fill.ipynb": (MASK, ["-inf", "0"]),  # the same bug among experiment cells
    "bug_no_mask.py": (MASK, ["mask"]),
    "bug_mask_off_by_one.py": (MASK, ["off by one"]),
    "bug_triu.py": (MASK | {"causal_flag_off"}, ["wrong triangle"]),
    "bug_softmax_query_axis.py": (
        {"weights_sum_to_one", "softmax_key_axis", "future_invariance", "causal_flag_off", "reference_match"},
        ["dim=-1", "query axis"],
    ),
    "bug_no_scaling.py": (SCALE, ["no scaling"]),
    "bug_scale_by_h.py": (SCALE, ["1/H"]),
    "bug_scale_by_sqrt_t.py": (SCALE, ["1/sqrt(T)"]),
    "bug_mask_diagonal.py": (
        {"weights_sum_to_one", "future_weights_zero", "mask_fill_value", "causal_flag_off", "finite_float32", "reference_match"},
        ["nan", "diagonal"],
    ),
    "bug_exp_no_max.py": ({"finite_float32"}, ["row max"]),
    "bug_weights_before_softmax.py": (
        {"weights_sum_to_one", "future_weights_zero", "mask_fill_value", "finite_float32", "reference_match"},
        ["before softmax"],
    ),
    "bug_inplace_scale.py": ({"inputs_unchanged"}, ["in place"]),
    "bug_fixed_T8.py": ({"reference_match"}, ["T=9"]),
    "bug_T_from_dim1.py": ({"output_shape", "future_weights_zero", "reference_match"}, ["q.size(-2)", "(1, 1, 2, 2)"]),
    "bug_mask_wrong_device.py": ({"device_placement"}, ["device=q.device"]),
    "bug_mask_cached_by_T.py": ({"device_placement"}, ["cached from a call on another device"]),
    "bug_dropout.py": (  # random: every property that compares two calls fails; the diagnosis names it
        {"weights_sum_to_one", "causal_flag_off", "future_invariance", "softmax_key_axis", "sqrt_scaling",
         "reference_match", "batch_independence"},
        ["different results for the same inputs"],
    ),
    "bug_causal_flag_ignored.py": ({"causal_flag_off"}, ["flag"]),
    "bug_causal_flag_inverted.py": (MASK | {"causal_flag_off"}, ["flag"]),
    "bug_weights_before_mask.py": ({"future_weights_zero", "mask_fill_value", "reference_match"}, ["future"]),
    "bug_mask_after_softmax.py": ({"weights_sum_to_one", "future_invariance", "reference_match"}, ["after softmax"]),
    "bug_batch_mix.py": ({"batch_independence", "weights_sum_to_one", "finite_float32", "reference_match"}, ["batch"]),
    "bug_float32_cast.py": ({"output_shape", "reference_match"}, ["dtype float32, expected float64"]),
    "bug_float32_softmax.py": ({"reference_match"}, ["float32 precision"]),
    "bug_detached.py": ({"gradients"}, [".detach()"]),
    "bug_imports_reference.py": ({"policy"}, ["reference"]),
    "vacuous_zeros.py": ({"content_dependent"}, ["ignore q and k"]),
    "vacuous_identity.py": ({"content_dependent"}, ["ignore q and k"]),
    "vacuous_causal_mean.py": ({"content_dependent"}, ["causal mean"]),
}
CORRECT = sorted(p.name for p in CH5.iterdir() if p.name.startswith("correct_"))


def test_every_sample_is_in_the_matrix():
    samples = {p.name for p in CH5.iterdir() if p.name.startswith(("bug_", "vacuous_"))}
    assert samples == set(EXPECTED)
    assert len(CORRECT) >= 10


@pytest.mark.parametrize("name", CORRECT)
def test_correct_variant_scores_full_marks(grade_of, name):
    assert_full_marks(grade_of(CH5 / name))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bug_fails_exactly_what_it_breaks(grade_of, name):
    assert_fails_exactly(grade_of(CH5 / name), *EXPECTED[name])


def test_every_check_in_the_rubric_can_fail():
    assert_every_check_can_fail(EXPECTED, "chapter5")


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
    assert grade_of(CH5 / "bug_float32_cast.py").score == 80


def test_same_submission_same_grade(grade_of):
    from grader import rubric
    from grader.grading import Grading

    again = Grading(CH5 / "bug_zero_fill.py", rubric.load("chapter5")).finish()
    assert again == grade_of(CH5 / "bug_zero_fill.py")
