"""What each mha_layer_rope sample must fail under the bundled rubric (CS336's
run_multihead_self_attention_with_rope: mha_layer's contract, q and k turned in adjacent pairs by
position / theta^(2k/d_head), positions from token_positions or arange(T)), and the words its feedback must contain."""

CONVENTION = {"rope_convention", "reference_match"}

EXPECTED = {
    "bug_positions_ignored.py": ({"positions_used"}, ["the output of arange(T)", "ignored"]),
    "bug_public_zli12_positions_ignored.py": ({"positions_used"}, ["ignored"]),
    "bug_public_incfly_batched_positions.py": ({"positions_used"}, ["another axis than the batch"]),
    # as its plain layer: built on the CPU, [B, T, d_model] float32 alone; and incfly's positions
    "bug_public_donglinkang_batched_positions.py": (
        {"output_shape", "device_placement", "positions_used"}, ["another axis than the batch", "meta"]),
    "bug_rotate_half.py": (CONVENTION, ["rotate-half pairs"]),
    "bug_rope_freq_exponent.py": (CONVENTION, ["theta^(-k/d_head)"]),
    "bug_rope_full_width.py": (CONVENTION, ["positions arange(T)"]),
    "bug_rope_on_v.py": (CONVENTION | {"relative_positions"}, ["adding", "absolute positions"]),
    "bug_rope_q_only.py": (CONVENTION | {"relative_positions"}, ["adding", "absolute positions"]),
    "vacuous_values_only.py": ({"content_dependent"}, ["its own token only"]),
    # mha_layer's bugs, each planted in correct_interleaved.py: they cost what they cost there
    "bug_no_causal_mask.py": ({"future_invariance", "reference_match"}, ["in its future"]),
    "bug_batch_mix.py": ({"batch_independence", "reference_match"}, ["depends on the other sequences"]),
    "bug_weights_not_transposed.py": ({"weights_transposed", "reference_match"}, ["x @ W instead of x @ W.T"]),
    "bug_no_output_proj.py": ({"out_proj_once", "reference_match"}, ["never applied"]),
    "bug_merge_heads_wrong_order.py": ({"heads_kept_apart", "reference_match"}, ["not split and merged in the same order"]),
    "bug_scale_by_d_model.py": ({"sqrt_scaling", "reference_match"}, ["scaled by 1/sqrt(d_model)", "all 0"]),
    "bug_inplace_scale.py": ({"inputs_unchanged"}, ["changed q_proj_weight"]),
    "bug_detached.py": ({"gradients"}, ["no gradient reaches"]),
    "bug_imports_reference.py": ({"policy"}, ["reference"]),
    "bug_weights_heads_last.py": ({"weights_shape"}, ["weights has shape (1, 2, 1, 2), expected (1, 1, 2, 2) or (1, 2, 2)"]),
    "bug_weights_before_mask.py": ({"future_weights_zero"}, ["in the future of query 0", "not the causally masked ones"]),
    "bug_weights_unnormalised.py": ({"weights_sum_to_one"}, ["should sum to 1", "not a softmax over the keys"]),
}
