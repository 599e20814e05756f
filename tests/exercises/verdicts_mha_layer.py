"""What each mha_layer sample must fail under the bundled rubric (CS336's run_multihead_self_attention: given
[d_model, d_model] weights applied as x @ W.T, the output alone), and the words its feedback must contain."""

EXPECTED = {
    "bug_view_no_transpose.py": (
        {"future_invariance", "heads_kept_apart", "reference_match"},
        ["changing x[0, 1] changed out[0, 0]", "depends on head 1"]),
    "bug_merge_heads_wrong_order.py": ({"heads_kept_apart", "reference_match"}, ["not split and merged in the same order"]),
    "bug_split_heads_interleaved.py": ({"heads_kept_apart", "reference_match"}, ["interleaved features"]),
    "bug_scale_by_d_model.py": ({"sqrt_scaling", "reference_match"}, ["scaled by 1/sqrt(d_model)", "d_head 1 kept"]),
    "bug_weights_not_transposed.py": ({"weights_transposed", "reference_match"}, ["x @ W instead of x @ W.T"]),
    "bug_no_output_proj.py": ({"out_proj_once", "reference_match"}, ["never applied"]),
    "bug_no_causal_mask.py": ({"future_invariance", "reference_match"}, ["changing x[0, 1] changed out[0, 0]", "in its future"]),
    "bug_batch_mix.py": ({"batch_independence", "reference_match"}, ["depends on the other sequences"]),
    "bug_mask_on_cpu.py": ({"device_placement"}, ["masked_fill mixes the inputs' device with a cpu tensor"]),
    # the module built on the CPU and never moved; [B, T, d_model] float32 only (its float32 Linear, 'B T (nH Hs)')
    "bug_public_donglinkang.py": (
        {"output_shape", "device_placement"},
        ["[b, t, d_model] float64, [t, d_model] float32, [b, s, t, d_model] float32", "bmm mixes the inputs' device"]),
    "bug_inplace_scale.py": ({"inputs_unchanged"}, ["changed q_proj_weight[0, 0]"]),
    "bug_detached.py": ({"gradients"}, ["no gradient reaches q_proj_weight, k_proj_weight", "detached"]),
    "bug_imports_reference.py": ({"policy"}, ["reference"]),
    "vacuous_zeros.py": ({"content_dependent"}, ["left out[0, 1] unchanged"]),
    "vacuous_values_only.py": ({"content_dependent"}, ["each output reads its own token only"]),
    "bug_weights_heads_last.py": ({"weights_shape"}, ["weights has shape (1, 2, 1, 2), expected (1, 1, 2, 2) or (1, 2, 2)"]),
    "bug_weights_before_mask.py": ({"future_weights_zero"}, ["in the future of query 0", "not the causally masked ones"]),
    "bug_weights_unnormalised.py": ({"weights_sum_to_one"}, ["should sum to 1", "not a softmax over the keys"]),
}
