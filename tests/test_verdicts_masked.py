"""The verdict matrix of the masked_self_attention exercise: every sample fails exactly the checks its bug breaks."""

import re

import pytest
from conftest import SUBMISSIONS, assert_every_check_can_fail, assert_fails_exactly, assert_full_marks

MSA = SUBMISSIONS / "masked_self_attention"
RUBRIC = "masked_self_attention"
MASK = {"future_weights_zero", "mask_fill_value", "future_invariance", "reference_match"}
PADDING = {"padding_keys_zero", "padded_rows_finite", "padding_invariance"}

# file -> (checks that must fail, words the feedback of those failures must contain)
EXPECTED = {
    "bug_nan_left_padding.py": ({"padded_rows_finite"}, ["is NaN", "sees only padding"]),
    "bug_padding_on_queries.py": ({"padding_keys_zero", "padding_invariance"}, ["queries", "[B, 1, 1, T]"]),
    "bug_padding_ignored.py": (PADDING, ["padding mask ignored", "is padding and query 1 is a real token"]),
    "bug_padding_wrong_axis.py": (PADDING, ["wrong axis", "lines the batch up with the heads"]),
    "bug_softmax_over_heads.py": ({"weights_sum_to_one", "heads_independent", "reference_match"}, ["heads axis (dim=1)"]),
    "bug_no_causal_mask.py": (MASK | {"padded_rows_finite"}, ["in the future of query 0"]),
    "bug_zero_fill.py": (MASK | PADDING, ["-inf", "finite value such as 0"]),
    "bug_finfo_min_rows.py": ({"padded_rows_finite"}, ["expected zeros", "-1e9"]),
    "bug_padding_after_softmax.py": ({"padding_invariance"}, ["after the softmax without renormalising"]),
    "bug_bool_only_mask.py": (PADDING, ["only supports boolean masks"]),
    "bug_weights_averaged_over_heads.py": ({"heads_independent", "reference_match"}, ["averaged over heads"]),
    "bug_mask_not_on_device.py": ({"device_placement"}, ["device=q.device"]),
    "bug_merged_heads.py": ({"output_shape", "content_dependent"}, ["out has shape (1, 2, 4), expected (1, 2, 2, 2)"]),
    "bug_softmax_query_axis.py": (
        {"weights_sum_to_one", "future_invariance", "softmax_key_axis", "reference_match", "padding_invariance"},
        ["dim=-1", "query axis"],
    ),
    "bug_exp_no_max.py": ({"finite_float32"}, ["row max"]),
    "bug_no_scaling.py": ({"sqrt_scaling", "reference_match"}, ["no scaling"]),
    "bug_scale_by_d_model.py": ({"heads_independent", "reference_match"}, ["sqrt(heads * Dk)", "head 0 alone"]),
    "bug_batch_mix.py": ({"batch_independence", "weights_sum_to_one", "reference_match", "padding_invariance"}, ["batch"]),
    "bug_inplace_scale.py": ({"inputs_unchanged"}, ["in place"]),
    "bug_detached.py": ({"gradients"}, [".detach()"]),
    "bug_imports_reference.py": ({"policy"}, ["reference"]),
    "vacuous_zeros.py": ({"content_dependent"}, ["ignore q and k"]),
    "vacuous_identity.py": ({"content_dependent"}, ["ignore q and k"]),
    "vacuous_causal_mean.py": ({"content_dependent"}, ["causal mean"]),
}
CORRECT = sorted(p.name for p in MSA.iterdir() if p.name.startswith("correct_"))


def test_every_sample_is_in_the_matrix():
    samples = {p.name for p in MSA.iterdir() if p.name.startswith(("bug_", "vacuous_"))}
    assert samples == set(EXPECTED)
    assert len(CORRECT) >= 10


@pytest.mark.parametrize("name", CORRECT)
def test_correct_variant_scores_full_marks(grade_of, name):
    assert_full_marks(grade_of(MSA / name, RUBRIC))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bug_fails_exactly_what_it_breaks(grade_of, name):
    assert_fails_exactly(grade_of(MSA / name, RUBRIC), *EXPECTED[name])


def test_every_check_in_the_rubric_can_fail():
    assert_every_check_can_fail(EXPECTED, RUBRIC)


@pytest.mark.parametrize("name", ["vacuous_zeros.py", "vacuous_identity.py", "vacuous_causal_mean.py"])
def test_vacuous_functions_score_at_most_ten_percent(grade_of, name):
    grade = grade_of(MSA / name, RUBRIC)
    assert grade.score <= 0.1 * grade.max_score


def test_left_padding_nan_says_nan_and_where_on_the_smallest_mask(grade_of):
    message = {o.id: o for o in grade_of(MSA / "bug_nan_left_padding.py", RUBRIC).outcomes}["padded_rows_finite"].message
    assert re.match(r"hidden_states\[0, \d+, 0, :\] is NaN for padding_mask \[\[0, 1\]\] \(query 0 sees only padding\)", message), message


def test_the_text_version_fixed_is_the_only_difference(grade_of):
    """The course text's version loses exactly the padded_rows_finite points; zeroing its NaN rows earns them back."""
    text = grade_of(MSA / "bug_nan_left_padding.py", RUBRIC)
    fixed = grade_of(MSA / "correct_text_fixed.py", RUBRIC)
    assert fixed.score - text.score == {o.id: o for o in fixed.outcomes}["padded_rows_finite"].max_points


def test_pytest_plugin_grades_with_the_masked_rubric(pytester):
    path = MSA / "bug_nan_left_padding.py"
    result = pytester.runpytest_subprocess("--submission", str(path), "--rubric", RUBRIC, "-v")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*padded_rows_finite FAILED*", "*is NaN for padding_mask*", "Total: 90/100"])
    assert "heads_independent PASSED" in result.stdout.str()
