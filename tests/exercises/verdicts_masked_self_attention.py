"""What each masked_self_attention sample must fail, and the words its feedback must contain."""

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
    # no input form works: output_shape says why, once, and every property is skipped
    "bug_merged_heads.py": ({"output_shape"}, ["handles none of the input forms", "expected (2, 3, 5, 4)"]),
    # wrapped public code (the header names the source)
    "limited_hf_gpt2.py": ({"output_shape"}, ["with v of q's size it is right", "sqrt(v.size(-1))"]),
    "limited_bloom_baddbmm.py": ({"output_shape"}, ["does not handle [B, heads, T, H] float64", "float32 only"]),
    "bug_softmax_query_axis.py": (
        {"weights_sum_to_one", "future_invariance", "softmax_key_axis", "reference_match", "padding_invariance"},
        ["dim=-1", "query axis"],
    ),
    "bug_exp_no_max.py": ({"finite_float32"}, ["row max"]),
    "bug_no_scaling.py": ({"sqrt_scaling", "reference_match"}, ["no scaling"]),
    "bug_scale_by_d_model.py": ({"heads_independent", "reference_match"}, ["sqrt(heads * Dk)", "head 0 alone"]),
    "bug_batch_mix.py": ({"batch_independence", "weights_sum_to_one", "reference_match", "padding_invariance"}, ["batch"]),
    "bug_inplace_scale.py": ({"inputs_unchanged"}, ["in place"]),
    # sequence 1 reads sequence 0's keys and values, padded ones included
    "bug_reads_batch_zero.py": ({"reference_match", "batch_independence", "padding_invariance"}, ["batch element 1 on its own", "k[:1]"]),
    "bug_detached.py": ({"gradients"}, [".detach()"]),
    "bug_imports_reference.py": ({"policy"}, ["reference"]),
    "vacuous_zeros.py": ({"content_dependent"}, ["ignore q and k"]),
    "vacuous_identity.py": ({"content_dependent"}, ["ignore q and k"]),
    "vacuous_causal_mean.py": ({"content_dependent"}, ["causal mean"]),
}
