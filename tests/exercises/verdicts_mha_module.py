"""What each mha_module sample must fail under the bundled rubric (the layer built with context length 8, dropout 0.1,
called in eval()), and the words its feedback must contain. A `limited_*` sample loses output_shape alone (a causal
buffer of the context length) and is in test_verdicts' limited list, but listed here too, as every sample is."""

LIMITED = ({"output_shape"}, ["context length of 8", "T = 12"])

EXPECTED = {
    "limited_cs224n.py": LIMITED,
    "limited_karpathy_gpt.ipynb": LIMITED,  # the lecture's whole gpt.py in cells: its data cell opens input.txt
    "limited_karpathy_multihead.py": LIMITED,
    "limited_mingpt.py": LIMITED,
    "limited_nanogpt.py": LIMITED,
    "limited_rasbt_causal_attention.py": LIMITED,
    "limited_rasbt_multihead.py": LIMITED,
    "bug_public_karpathy_scale_n_embd.py": (
        {"output_shape", "sqrt_scaling", "reference_match"}, ["scaled by 1/sqrt(d_model)", "T = 12"]),
    "bug_scale_by_d_model.py": ({"sqrt_scaling", "reference_match"}, ["scaled by 1/sqrt(d_model)", "1/sqrt(d_head)"]),
    "bug_view_no_transpose.py": (
        {"future_invariance", "heads_kept_apart", "reference_match"},
        ["changing x[0, 1] changed out[0, 0]", "depends on head 1"]),
    "bug_merge_heads_wrong_order.py": ({"heads_kept_apart", "reference_match"}, ["not split and merged in the same order"]),
    "bug_out_proj_twice.py": ({"out_proj_once", "reference_match"}, ["applied more than once"]),
    "bug_no_out_proj.py": ({"out_proj_once", "reference_match"}, ["never applied"]),
    "bug_bias_dropped.py": ({"bias_used", "reference_match"}, ["b_v left out unchanged", "bias is dropped"]),
    # dropout left on in eval(): every comparison of two calls differs
    "bug_dropout_in_eval.py": (
        {"future_invariance", "batch_independence", "out_proj_once", "eval_deterministic", "reference_match"},
        ["different results for the same inputs", "training=self.training"]),
    "bug_no_causal_mask.py": ({"future_invariance", "reference_match"}, ["changing x[0, 1] changed out[0, 0]", "future"]),
    "bug_mask_on_cpu.py": ({"device_placement"}, ["masked_fill mixes the inputs' device with a cpu tensor"]),
    "bug_qkv_chunk_order.py": ({"reference_match"}, ["the reference gives", "q, k, v in that order"]),
    "bug_softmax_wrong_axis.py": ({"future_invariance", "reference_match"}, ["changing x[0, 1] changed out[0, 0]"]),
    "bug_detached_weights.py": ({"gradients"}, ["grad of w_q", "no gradient reaches it"]),
    "bug_batch_time_swapped.py": (
        {"future_invariance", "batch_independence", "reference_match"}, ["depends on the other batch elements"]),
    "bug_imports_reference.py": ({"policy"}, ["reference"]),
    "vacuous_identity.py": ({"content_dependent"}, ["changing x[0, 0] left out[0, 1] unchanged"]),
    "vacuous_values_only.py": ({"content_dependent"}, ["its own token only"]),
    "bug_weights_heads_last.py": ({"weights_shape"}, ["weights has shape (1, 2, 1, 2), expected (1, 1, 2, 2) or (1, 2, 2)"]),
    "bug_weights_before_mask.py": ({"future_weights_zero"}, ["in the future of query 0", "not the causally masked ones"]),
    "bug_weights_unnormalised.py": ({"weights_sum_to_one"}, ["should sum to 1", "not a softmax over the keys"]),
}
