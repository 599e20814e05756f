"""What each grouped_query sample must fail, and the words its feedback must contain."""

MASK = {"future_weights_zero", "mask_fill_value", "future_invariance", "reference_match"}

# file -> (checks that must fail, words the feedback of those failures must contain)
EXPECTED = {
    "bug_tiled_heads.py": ({"reference_match", "kv_head_groups", "repeat_kv_equivalent"}, ["heads are tiled", "repeat_interleave"]),
    "bug_expand_time_dim.py": (
        {"future_invariance", "reference_match", "repeat_kv_equivalent", "mha_and_mqa"},
        ["the future values reach the past", "repeat-interleaved 2 times"],
    ),
    "bug_group_count_for_size.py": ({"kv_head_groups", "repeat_kv_equivalent", "mha_and_mqa"}, ["group size and the number of groups"]),
    "bug_no_mask.py": (MASK, ["in the future of query 0"]),
    "bug_softmax_query_axis.py": ({"weights_sum_to_one", "future_invariance", "softmax_key_axis", "reference_match"}, ["dim=-1", "query axis"]),
    "bug_exp_no_max.py": ({"finite_float32"}, ["row max"]),
    "bug_no_scaling.py": ({"sqrt_scaling", "reference_match"}, ["no scaling"]),
    "bug_scale_by_d_model.py": ({"reference_match", "mha_and_mqa"}, ["sqrt(Hq * D)", "alone with key/value head"]),
    "bug_batch_mix.py": ({"weights_sum_to_one", "reference_match", "batch_independence"}, ["batch"]),
    "bug_inplace_scale.py": ({"inputs_unchanged"}, ["in place"]),
    "bug_mask_on_cpu.py": ({"device_placement"}, ["device=q.device"]),
    "bug_detached.py": ({"gradients"}, [".detach()"]),
    "bug_float32_weights.py": ({"output_shape"}, ["dtype float32, expected float64"]),  # the dtype costs output_shape; float32 accuracy is enough
    "bug_imports_reference.py": ({"policy"}, ["reference"]),
    "vacuous_causal_mean.py": ({"content_dependent"}, ["causal mean"]),
}
