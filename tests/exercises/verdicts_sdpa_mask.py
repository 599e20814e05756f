"""What each sdpa_mask sample must fail under the bundled rubric (bool mask, True = may attend; a query with no
allowed key gives zeros), and the words its feedback must contain."""

# masked keys keep weight: every check that looks at a masked key, and the empty row (softmax over all keys)
SEEN = {"mask_respected", "mask_pattern_match", "future_weights_zero", "mask_fill_value", "future_invariance",
        "fully_masked_rows", "reference_match"}
EMPTY_ROW = {"fully_masked_rows"}

EXPECTED = {
    "bug_mask_ignored.py": (SEEN, ["the mask hides key 1 from query 0", "ignored"]),
    "bug_zero_fill.py": (SEEN, ["finite fill", "-30"]),
    "bug_additive_bool_mask.py": (SEEN, ["the mask hides key 1", "0.2689"]),
    "bug_mask_transposed.py": (SEEN, ["transposed ([keys, queries])", "expected (1, 1, 1)"]),
    "bug_mask_inverted.py": (SEEN | {"weights_sum_to_one"}, ["read the other way round (true as hidden)"]),
    "bug_mask_after_softmax.py": (
        {"weights_sum_to_one", "future_invariance", "mask_pattern_match", "reference_match"},
        ["mask applied after softmax", "normalisation"],
    ),
    "bug_softmax_query_axis.py": (
        {"weights_sum_to_one", "future_invariance", "softmax_key_axis", "mask_pattern_match", "no_mask",
         "reference_match"},
        ["query axis", "softmax over keys"],
    ),
    "bug_batch_mix.py": (
        {"weights_sum_to_one", "batch_independence", "mask_pattern_match", "no_mask", "reference_match"},
        ["depends on the other batch elements"],
    ),
    "bug_no_scaling.py": ({"sqrt_scaling", "reference_match"}, ["that is no scaling"]),
    "limited_scale_by_dv.py": ({"output_shape"}, ["with v of q's size it is right", "sqrt(v.size(-1))"]),
    "bug_exp_no_max.py": ({"finite_float32"}, ["row maximum"]),
    "bug_mask_not_broadcast.py": ({"mask_broadcast"}, ["IndexError", "mask[b]"]),
    "bug_public_ahmedjjj_mask_not_broadcast.py": (EMPTY_ROW | {"mask_broadcast"}, ["IndexError", "is NaN"]),
    "bug_public_roeehendel_mask_none.py": (EMPTY_ROW | {"no_mask"}, ["mask=None", "with mask None"]),
    "bug_nan_fully_masked.py": (EMPTY_ROW, ["is NaN where query 0 may attend to no key"]),
    "bug_uniform_fully_masked.py": (EMPTY_ROW, ["is 1 where query 0 may attend to no key", "-1e9"]),
    "bug_public_zli12.py": (EMPTY_ROW, ["is NaN"]),
    "bug_public_incfly.py": (EMPTY_ROW, ["is NaN"]),
    "bug_public_donglinkang.py": (EMPTY_ROW, ["is NaN"]),
    "bug_inplace_mask.py": ({"mask_unchanged"}, ["changed mask[0, 0, 0] from true to false", "logical_not_()"]),
    "bug_inplace_scale.py": ({"inputs_unchanged"}, ["changed q[0, 0, 0]", "in place"]),
    "bug_fill_on_cpu.py": ({"device_placement"}, ["meta (the inputs' device) and cpu"]),
    "bug_detached.py": ({"gradients"}, ["no gradient reaches q, k", ".detach()"]),
    "bug_returns_tuple.py": ({"output_shape"}, ["returned a tuple of length 2, expected (out)"]),
    "limited_3d_only.py": ({"output_shape"}, ["[B, heads, T, H]"]),
    "bug_imports_reference.py": ({"policy"}, ["reference"]),
    "vacuous_zeros.py": ({"content_dependent"}, ["ignore q and k"]),
    "vacuous_mean_of_v.py": ({"content_dependent"}, ["ignore q and k"]),
    "vacuous_masked_mean.py": ({"content_dependent"}, ["causal mean"]),
}
