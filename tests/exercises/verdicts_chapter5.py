"""What each chapter5 sample must fail, and the words its feedback must contain (the verdict matrix's data)."""

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
    # a layout bug (right on [B, T, H], raises on [B, heads, T, H]): it costs output_shape, once
    "bug_T_from_dim1.py": ({"output_shape"}, ["q.size(-2)", "does not handle [B, heads, T, H]"]),
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
    "bug_float32_cast.py": ({"output_shape"}, ["dtype float32, expected float64"]),  # float32 accuracy is enough
    "bug_half_precision.py": ({"weights_sum_to_one", "reference_match"}, ["is a bfloat16 value", "half precision"]),
    "bug_inplace_cpu_bias.py": ({"device_placement"}, ["add_ mixes the inputs' device with a cpu tensor"]),
    "bug_reads_batch_zero.py": ({"batch_independence", "reference_match"}, ["batch element 1 on its own"]),
    "bug_scale_fixed_d_model.py": (SCALE, ["0.05103 = 1/sqrt(384) at every H"]),
    # wrapped public code (the header names the source)
    "limited_hf_gpt2.py": ({"output_shape"}, ["returns 4-D results for 3-D inputs", "[1, 1, N, N]"]),
    "bug_public_pytorch_docs.py": ({"device_placement"}, ["masked_fill_ mixes the inputs' device with a cpu tensor"]),
    "limited_nanogpt.py": ({"output_shape"}, ["returns 4-D results for 3-D inputs", "[1, 1, N, N]"]),
    "limited_mingpt.py": ({"output_shape"}, ["returns 4-D results for 3-D inputs", "[1, 1, N, N]"]),
    "limited_llama.py": ({"output_shape"}, ["needs 4-D inputs"]),
    "limited_xtransformers.py": ({"output_shape"}, ["needs 4-D inputs"]),
    "limited_rasbt_multihead.py": ({"output_shape"}, ["needs 4-D inputs"]),
    "limited_rasbt_causal.py": ({"output_shape"}, ["needs 3-D inputs"]),
    "limited_fairseq.py": ({"output_shape"}, ["needs 3-D inputs", "bmm"]),
    "limited_d2l.py": ({"output_shape"}, ["needs 3-D inputs"]),
    "bug_detached.py": ({"gradients"}, [".detach()"]),
    "bug_imports_reference.py": ({"policy"}, ["reference"]),
    "vacuous_zeros.py": ({"content_dependent"}, ["ignore q and k"]),  # zeros_like(q): v has q's size in chapter 5
    "vacuous_identity.py": ({"content_dependent"}, ["ignore q and k"]),
    "vacuous_causal_mean.py": ({"content_dependent"}, ["causal mean"]),
}
