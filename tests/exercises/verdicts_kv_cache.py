"""What each kv_cache sample must fail, and the words its feedback must contain."""

MASK = {"future_weights_zero", "mask_fill_value", "future_invariance", "reference_match"}
BAD_CACHE = {"cache_returned", "chunk_after_past", "cache_unchanged"}  # every call with a cache fails; decoding is skipped

# file -> (checks that must fail, words the feedback of those failures must contain)
EXPECTED = {
    "bug_mask_top_left.py": ({"decode_matches_full", "chunk_after_past"}, ["aligned to the top-left", "tril() without diagonal=P"]),
    "bug_no_mask_with_cache.py": ({"chunk_after_past"}, ["is in its future", "no mask with a cache"]),
    "bug_cat_wrong_dim.py": (BAD_CACHE, ["on the wrong dim", "dim=1"]),
    "bug_cache_new_only.py": (BAD_CACHE, ["only the new keys returned", "k_all has shape (1, 1, 1, 2), expected (1, 1, 2, 2)"]),
    "bug_cat_order.py": ({"cache_returned", "chunk_after_past"}, ["in the wrong order", "then the new 1 position"]),
    "bug_cache_rolled_in_place.py": ({"cache_unchanged"}, ["your function changed v_past", "copy_"]),
    "bug_zero_fill.py": (MASK, ["-inf", "finite value such as 0"]),
    "bug_softmax_query_axis.py": (
        {"weights_sum_to_one", "future_invariance", "softmax_key_axis", "reference_match", "decode_matches_full", "chunk_after_past"},
        ["dim=-1", "query axis"],
    ),
    "bug_exp_no_max.py": ({"finite_float32"}, ["row max"]),
    "bug_no_scaling.py": ({"sqrt_scaling", "reference_match"}, ["no scaling"]),
    "bug_batch_mix.py": ({"weights_sum_to_one", "reference_match", "batch_independence"}, ["batch"]),
    "bug_inplace_scale.py": ({"inputs_unchanged"}, ["in place"]),
    "bug_mask_on_cpu.py": ({"device_placement"}, ["device=q.device"]),
    "bug_mask_on_cpu_prefill.py": ({"device_placement"}, ["cache=None", "device=q.device"]),
    "bug_detached.py": ({"gradients"}, [".detach()"]),
    "bug_float32_weights.py": ({"output_shape"}, ["dtype float32, expected float64"]),  # the dtype costs output_shape; float32 accuracy is enough
    "bug_imports_reference.py": ({"policy"}, ["reference"]),
    "vacuous_causal_mean.py": ({"content_dependent"}, ["causal mean"]),
}
