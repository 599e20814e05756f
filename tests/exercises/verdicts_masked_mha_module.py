"""What each masked_mha_module sample must fail under the bundled rubric (the layer built with context length 8,
dropout 0.1, called in eval(); the padding mask passed as int64 1 = real token), and the words its feedback must
contain. A `limited_*` sample loses output_shape alone (a causal buffer of the context length) and is in
test_verdicts' limited list, but listed here too, as every sample is."""

PADDING_SEEN = {"padding_keys_zero", "padded_rows_finite", "padding_invariance"}  # the padded keys reach real tokens

EXPECTED = {
    "limited_rasbt_buffer.py": ({"output_shape"}, ["context length of 8", "T = 12"]),
    "vacuous_values_only.py": ({"content_dependent"}, ["changing x[0, 0] left out[0, 1] unchanged"]),
    # the padding: the course text's own function, padding ignored, on the wrong axis, instead of the causal mask
    "bug_course_text_nan.py": ({"padded_rows_finite"}, ["hidden_states[0, 0, 0] is NaN", "sees no real key"]),
    "bug_torch_mha_nan.py": ({"padded_rows_finite"}, ["is NaN", "padding_mask [[0, 1]]"]),
    "bug_hf_gpt2_eager_padded_rows.py": ({"padded_rows_finite"}, ["= 0.5", "so its weights are all 0"]),
    "bug_padding_ignored.py": (PADDING_SEEN, ["key 0 of sequence 0 is padding", "changing the padded tokens"]),
    "bug_padding_on_queries.py": (
        {"padding_keys_zero", "padding_invariance"}, ["key 0 of sequence 0 is padding", "applied to the queries"]),
    "bug_padding_replaces_causal.py": (PADDING_SEEN, ["key 2 is in the future of query 1", "changing token 2, the last"]),
    "bug_padding_mask_batch_heads.py": (PADDING_SEEN, ["RuntimeError", "lines the batch up with the heads"]),
    # the weights: due beside the output, every head's, those the output is computed from
    "bug_output_only.py": ({"weights_shape"}, ["returns its output alone", "(1, 1, 2, 2) or (1, 2, 2)"]),
    "bug_torch_mha_mean_weights.py": ({"weights_shape"}, ["weights has shape (1, 2, 2), expected (1, 2, 2, 2)",
                                                          "average_attn_weights"]),
    "bug_weights_unnormalised.py": ({"weights_sum_to_one"}, ["should sum to 1"]),
    "bug_weights_before_mask.py": (
        {"future_weights_zero", "padding_keys_zero", "padded_rows_finite"},
        ["not the causally masked ones", "key 0 of sequence 0 is padding"]),
    # mha_module's own mistakes, in the Level 2 layer
    "bug_no_causal_mask.py": (
        {"future_invariance", "reference_match", "future_weights_zero"} | PADDING_SEEN,
        ["changing x[0, 1] changed out[0, 0]", "key 1 is in the future of query 0"]),
    "bug_batch_time_swapped.py": (
        {"future_invariance", "batch_independence", "reference_match", "padding_invariance"},
        ["depends on the other batch elements"]),
    "bug_no_out_proj.py": ({"out_proj_once", "reference_match"}, ["never applied"]),
    "bug_merge_heads_wrong_order.py": ({"heads_kept_apart", "reference_match"}, ["not split and merged in the same order"]),
    "bug_scale_by_d_model.py": ({"sqrt_scaling", "reference_match"}, ["scaled by 1/sqrt(d_model)"]),
    "bug_bias_dropped.py": ({"bias_used", "reference_match"}, ["b_v left out unchanged"]),
    "bug_dropout_in_eval.py": (
        {"future_invariance", "batch_independence", "out_proj_once", "eval_deterministic", "reference_match",
         "padding_invariance"},
        ["different results for the same inputs", "training=self.training"]),
    "bug_mask_on_cpu.py": ({"device_placement"}, ["padding_mask [[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]]", "meta"]),
    "bug_qkv_order.py": ({"reference_match"}, ["the reference gives"]),
    "bug_detached_weights.py": ({"gradients"}, ["no gradient reaches w_q, w_k"]),
    "bug_imports_reference.py": ({"policy"}, ["reference"]),
}
