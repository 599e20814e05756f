"""What each prefix_lm sample must fail, and the words its feedback must contain."""

# a key after the query and after the prefix gets weight
LEAK = {"masked_weights_zero", "mask_fill_value", "masked_invariance", "reference_match"}
# a key the prefix shows stays hidden
HIDDEN = {"prefix_visible", "prefix_extremes", "reference_match"}

# file -> (checks that must fail, words the feedback of those failures must contain)
EXPECTED = {
    "bug_prefix_on_queries.py": (LEAK, ["applied to the queries", "key 1 is after query 0 and after the prefix"]),
    "bug_prefix_one_too_long.py": (LEAK, ["one too long (j <= prefix_len)", "after the prefix, prefix_len = 1"]),
    "bug_prefix_one_too_short.py": (HIDDEN, ["one too short", "key 1 is in the prefix (j < prefix_len = 2)"]),
    "bug_prefix_ignored.py": (HIDDEN, ["never applied", "every query sees every key"]),
    "bug_no_mask.py": (LEAK | {"prefix_extremes"}, ["no causal mask", "with no prefix the attention is causal"]),
    "bug_one_length_for_batch.py": ({"per_row_prefix"}, ["prefix_len[0]", "looks computed with prefix_len = 0"]),
    "bug_lengths_wrong_axis.py": ({"per_row_prefix"}, ["wrong axis", "view(B, 1, 1, 1)"]),
    "bug_int_only.py": ({"per_row_prefix"}, ["takes only an int", "prompt = j < prefix_len"]),
    "bug_zero_fill.py": (LEAK | {"prefix_extremes"}, ["-inf", "finite fill"]),
    "bug_softmax_query_axis.py": (
        {"weights_sum_to_one", "masked_invariance", "softmax_key_axis", "reference_match"},
        ["dim=-1", "query axis"],
    ),
    "bug_exp_no_max.py": ({"finite_float32"}, ["row max"]),
    "bug_no_scaling.py": ({"sqrt_scaling", "reference_match"}, ["no scaling"]),
    "bug_batch_mix.py": (
        {"weights_sum_to_one", "per_row_prefix", "finite_float32", "reference_match", "batch_independence"},
        ["batch"],
    ),
    "bug_inplace_scale.py": ({"inputs_unchanged"}, ["in place"]),
    "bug_mask_not_on_device.py": ({"device_placement"}, ["device=q.device"]),
    "bug_detached.py": ({"gradients"}, [".detach()"]),
    "bug_float32_cast.py": ({"output_shape"}, ["dtype float32, expected float64"]),  # the dtype costs output_shape; float32 accuracy is enough
    "bug_imports_reference.py": ({"policy"}, ["reference"]),
    "vacuous_identity.py": ({"content_dependent"}, ["ignore q and k"]),
}
