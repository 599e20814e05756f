"""What each sliding_window sample must fail, and the words its feedback must contain."""

# a key outside the band gets weight: the band checks, the fill check (on the shared window) and the reference
BAND = {"band_weights_zero", "mask_fill_value", "band_invariance", "window_one_is_v", "reference_match"}

# file -> (checks that must fail, words the feedback of those failures must contain)
EXPECTED = {
    "bug_mistral_band.py": (BAND, ["outside its window of 1 (key 1 alone)", "triu(mask, diagonal=-window) keeps window + 1 keys"]),
    "bug_band_wrong_side.py": (BAND, ["the first window keys instead of the last", "outside the window of query"]),
    "bug_window_ignored.py": (BAND, ["no window at all", "outside its window"]),
    "bug_band_too_narrow.py": (
        {"band_weights_zero", "window_covers_all", "window_one_is_v", "reference_match"},
        ["one too narrow", "with window = T = 2", "no key at all (too narrow: NaN)"],
    ),
    "bug_symmetric_band.py": (
        {"band_weights_zero", "mask_fill_value", "future_invariance", "reference_match"},
        ["symmetric band", "key 1 is in the future of query 0"],
    ),
    "bug_zero_fill.py": (BAND | {"future_invariance"}, ["-inf", "finite fill"]),
    "bug_softmax_query_axis.py": (
        {"weights_sum_to_one", "future_invariance", "softmax_key_axis", "reference_match"},
        ["dim=-1", "query axis"],
    ),
    "bug_exp_no_max.py": ({"finite_float32"}, ["row max"]),
    "bug_no_scaling.py": ({"sqrt_scaling", "reference_match"}, ["no scaling"]),
    "bug_batch_mix.py": (
        {"weights_sum_to_one", "window_one_is_v", "finite_float32", "reference_match", "batch_independence"},
        ["batch"],
    ),
    "bug_inplace_scale.py": ({"inputs_unchanged"}, ["in place"]),
    "bug_mask_not_on_device.py": ({"device_placement"}, ["device=q.device"]),
    "bug_detached.py": ({"gradients"}, [".detach()"]),
    "bug_float32_cast.py": ({"output_shape"}, ["dtype float32, expected float64"]),  # the dtype costs output_shape; float32 accuracy is enough
    "bug_imports_reference.py": ({"policy"}, ["reference"]),
    "vacuous_identity.py": ({"content_dependent"}, ["ignore q and k"]),
}
