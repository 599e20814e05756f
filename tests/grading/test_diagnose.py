"""Misconception diagnosis, on every registered exercise with planted bugs (as the verdict matrix covers every
exercise): every sample gets the diagnosis it must, every planted bug alone or with another gets its name,
correct code gets none, and nothing is guessed."""

import pytest
import torch

from conftest import SUBMISSIONS

from grader.exercises import EXERCISES
from grader.grading import diagnosis as D

DIAGNOSED = sorted(name for name, exercise in EXERCISES.items() if exercise.variants is not None)
V = EXERCISES["chapter5"].variants

# What a sample must get, by its name, in every exercise that has it: the common mistake it is named for, or [] where
# the maths is right on the probes and the failure lies elsewhere (dtype, autograd, device, in-place, a forbidden
# import): the failed check's own message says what it is.
EVERYWHERE = {
    "bug_no_scaling.py": ["no scaling"],
    "bug_no_mask.py": ["no mask"],
    "bug_zero_fill.py": ["zero fill"],
    "bug_softmax_query_axis.py": ["softmax over queries"],
    "bug_batch_mix.py": ["batch mixed"],
    "bug_exp_no_max.py": ["exp without max"],
    "vacuous_causal_mean.py": ["causal mean"],
    "vacuous_identity.py": [D.UNRECOGNISED],
    **{name: [] for name in ("bug_detached.py", "bug_float32_cast.py", "bug_float32_weights.py", "bug_imports_reference.py",
                             "bug_inplace_scale.py", "bug_mask_not_on_device.py", "bug_mask_on_cpu.py")},
}
# exercise -> sample -> the diagnosis it must get, for the exercise's own samples and where EVERYWHERE's does not hold
NAMED = {
    "chapter5": {
        "bug_batch_mix.py": ["batch mixed", "global max"],
        "bug_causal_flag_ignored.py": ["causal flag ignored"],
        "bug_causal_flag_inverted.py": ["causal flag inverted"],
        "bug_weights_before_mask.py": ["weights before mask"],
        "bug_dropout.py": [D.RANDOM],
        "bug_mask_after_softmax.py": ["mask after softmax"],
        "bug_mask_diagonal.py": ["diagonal masked"],
        "bug_mask_off_by_one.py": ["mask off by one"],
        "bug_notebook_zero_fill.ipynb": ["zero fill"],
        "bug_scale_by_h.py": ["scaled by 1/H"],
        "bug_scale_by_sqrt_t.py": ["scaled by 1/sqrt(T)"],
        "bug_triu.py": ["triu for tril"],
        "bug_weights_before_softmax.py": ["weights before softmax"],
        "vacuous_zeros.py": [D.UNRECOGNISED],
        "bug_fixed_T8.py": [],
        "bug_T_from_dim1.py": [],
        "bug_half_precision.py": [D.UNRECOGNISED],
        "bug_inplace_cpu_bias.py": [],
        "bug_reads_batch_zero.py": [D.UNRECOGNISED],  # no planted bug reads another element's keys
        "bug_scale_fixed_d_model.py": [D.UNRECOGNISED],  # likewise the fixed size
        "bug_public_pytorch_docs.py": [],
        "bug_fill_neg1e4.py": [],
        "bug_additive_neg1e4.py": [],
        "bug_mask_wrong_device.py": [],
        "bug_mask_cached_by_T.py": [],
        **{f"limited_{name}.py": [] for name in ("d2l", "fairseq", "hf_gpt2", "llama", "mingpt", "nanogpt", "rasbt_causal",
                                                  "rasbt_multihead", "xtransformers")},  # right where they reach
    },
    "sliding_window": {
        "bug_mistral_band.py": ["band one too wide"],
        "bug_band_too_narrow.py": ["band one too narrow"],
        "bug_symmetric_band.py": ["symmetric band"],
        "bug_band_wrong_side.py": ["band from the wrong side"],
        "bug_window_ignored.py": ["window ignored"],
        "bug_batch_mix.py": [D.UNRECOGNISED],  # no "batch mixed" planted in this exercise
        "bug_exp_no_max.py": [],  # no probe has scores large enough to overflow
    },
    "prefix_lm": {
        "bug_prefix_on_queries.py": ["prefix on queries"],
        "bug_prefix_one_too_long.py": ["prefix one too long"],
        "bug_prefix_one_too_short.py": ["prefix one too short"],
        "bug_prefix_ignored.py": ["prefix ignored"],
        "bug_one_length_for_batch.py": ["one length for the batch"],
        "bug_batch_mix.py": [D.UNRECOGNISED],  # as in sliding_window
        "bug_exp_no_max.py": [],
        "bug_int_only.py": [],  # right on every int: the probe with a tensor raises and is left out
        "bug_lengths_wrong_axis.py": [],  # right on the probes' [B, T, H]: only [B, heads, T, H] meets the heads with the batch
    },
    "grouped_query": {
        "bug_tiled_heads.py": ["heads tiled"],
        "bug_expand_time_dim.py": ["time and heads mixed"],
        "bug_scale_by_d_model.py": ["scaled by sqrt(Hq * D)"],
        "bug_group_count_for_size.py": [],  # right on the probes' Hq = 4, Hkv = 2 and 1: only Hkv == Hq breaks it
    },
    "sdpa_mask": {
        "bug_mask_inverted.py": ["mask inverted"],
        "bug_mask_ignored.py": ["mask ignored"],
        "bug_mask_after_softmax.py": ["mask after softmax"],
        "bug_additive_bool_mask.py": [D.UNRECOGNISED],  # +1 on the allowed scores: no planted bug adds to them
        "bug_mask_not_broadcast.py": [D.UNRECOGNISED],  # the probes' [Tq, Tk] mask read per batch element
        "bug_mask_transposed.py": [],  # the probes have Tq != Tk: every call raises, nothing to compare
        "vacuous_zeros.py": [D.UNRECOGNISED],
        "vacuous_mean_of_v.py": [D.UNRECOGNISED],
        "vacuous_masked_mean.py": [D.UNRECOGNISED],
        **{name: [] for name in ("bug_fill_on_cpu.py", "bug_inplace_mask.py", "bug_returns_tuple.py", "limited_3d_only.py", "limited_scale_by_dv.py",
                                 "bug_nan_fully_masked.py", "bug_uniform_fully_masked.py", "bug_public_zli12.py",
                                 "bug_public_incfly.py", "bug_public_donglinkang.py", "bug_public_roeehendel_mask_none.py",
                                 "bug_public_ahmedjjj_mask_not_broadcast.py")},  # right on the probes
    },
    "kv_cache": {
        "bug_mask_top_left.py": ["mask top-left"],
        "bug_no_mask_with_cache.py": ["no mask with a cache"],
        "bug_cat_order.py": ["new keys first"],
        "bug_cat_wrong_dim.py": [],  # every probe with a cache raises or returns the wrong shape: nothing to compare
        "bug_cache_new_only.py": [],
        "bug_cache_rolled_in_place.py": [],
        "bug_mask_on_cpu_prefill.py": [],  # right on the CPU: the device check's message says where
    },
}


def samples(exercise: str, prefixes: tuple[str, ...]) -> list[str]:
    return sorted(p.name for p in (SUBMISSIONS / exercise).iterdir() if p.name.startswith(prefixes))


def expected(exercise: str) -> dict[str, list[str]]:
    """Sample -> the diagnosis it must get: EVERYWHERE's for the samples it names, the exercise's own over them."""
    there = {name: d for name, d in EVERYWHERE.items() if (SUBMISSIONS / exercise / name).exists()}
    return {**there, **NAMED.get(exercise, {})}


SAMPLES = [(e, name) for e in DIAGNOSED for name in sorted(expected(e))]
CORRECT = [(e, name) for e in DIAGNOSED for name in samples(e, ("correct_",))]
MISTAKES = [(e, m) for e in DIAGNOSED for m in EXERCISES[e].variants.mistakes]


@pytest.mark.parametrize("exercise", DIAGNOSED)
def test_every_sample_has_an_expected_diagnosis(exercise):
    assert set(samples(exercise, ("bug_", "vacuous_", "limited_"))) == set(expected(exercise))


@pytest.mark.parametrize("exercise, name", SAMPLES)
def test_sample_gets_its_diagnosis(grade_of, exercise, name):
    assert grade_of(SUBMISSIONS / exercise / name, exercise).diagnosis == expected(exercise)[name]


@pytest.mark.parametrize("exercise, name", CORRECT)
def test_correct_code_gets_no_diagnosis_even_when_asked(grade_of, exercise, name):
    from grader.grading import rubric
    from grader.grading.engine import Grading

    path, ex = SUBMISSIONS / exercise / name, EXERCISES[exercise]
    assert grade_of(path, exercise).diagnosis == []
    g = Grading(path, rubric.load(exercise))  # run the comparison anyway (grading skips it when all pass)
    try:
        assert g.outcome("loads").status == "passed"
        assert D.diagnose(ex.variants, lambda *a, **kw: g.subject.call(*a, expect=ex.expect(*a, **kw), **kw)[:2]) == []
    finally:
        g.close()


def as_student(variants, bugs):
    return lambda *args, **kw: variants.plant(*args, **kw, bugs=frozenset(bugs))


@pytest.mark.parametrize("exercise, name", MISTAKES)
def test_each_known_mistake_alone_is_recognised(exercise, name):
    variants = EXERCISES[exercise].variants
    assert D.diagnose(variants, as_student(variants, {name})) == [name]


@pytest.mark.parametrize("exercise", DIAGNOSED)
def test_two_mistakes_are_named_together_or_by_an_equivalent_simpler_one(exercise):
    variants = EXERCISES[exercise].variants
    for bugs in D.candidates(variants):
        got = D.diagnose(variants, as_student(variants, bugs))
        if got != sorted(bugs, key=list(variants.mistakes).index):
            # the probes cannot separate them: then the simpler diagnosis behaves identically everywhere probed
            assert len(got) < len(bugs) and got != [D.UNRECOGNISED], (bugs, got)
            for args, kw in variants.probes():
                assert D.matches(variants.plant(*args, **kw, bugs=frozenset(got)), variants.plant(*args, **kw, bugs=bugs))


def test_unknown_behaviour_is_unrecognised_not_guessed():
    def odd(q, k, v, causal=True):  # a right-looking function with the wrong constant: none of the known mistakes
        w = torch.softmax(q @ k.transpose(-2, -1) / 2.5 + torch.ones(q.shape[-2], q.shape[-2]).triu(1) * -1e9, dim=-1)
        return w @ v, w

    assert D.diagnose(V, odd) == [D.UNRECOGNISED]


def test_probes_the_submission_cannot_take_are_left_out():
    def no_flag(q, k, v):  # no causal parameter: the causal=False probe raises, the rest still diagnose
        return V.plant(q, k, v, bugs=frozenset({"zero fill"}))

    assert D.diagnose(V, no_flag) == ["zero fill"]
    assert D.diagnose(V, lambda *a, **kw: 1 / 0) == []


def test_exercise_without_variants_gets_no_diagnosis():
    def never(*a, **kw):
        raise AssertionError("must not call the submission")

    assert D.diagnose(EXERCISES["masked_self_attention"].variants, never) == []
