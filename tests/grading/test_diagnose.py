"""Misconception diagnosis: every planted bug gets its name, correct code gets none, and nothing is guessed."""

import pytest
import torch
from conftest import CH5_DIR as CH5

from grader.exercises import EXERCISES
from grader.grading import diagnosis as D

CH5_EX = EXERCISES["chapter5"]
V = CH5_EX.variants

# sample -> the diagnosis it must get. [] where the maths is right and the failure lies elsewhere (dtype, autograd,
# device, in-place, a length limit, a forbidden import): the failed check's own message says what it is.
NAMED = {
    "bug_batch_mix.py": ["batch mixed", "global max"],
    "bug_causal_flag_ignored.py": ["causal flag ignored"],
    "bug_causal_flag_inverted.py": ["causal flag inverted"],
    "bug_weights_before_mask.py": ["weights before mask"],
    "bug_dropout.py": ["random output"],
    "bug_exp_no_max.py": ["exp without max"],
    "bug_mask_after_softmax.py": ["mask after softmax"],
    "bug_mask_diagonal.py": ["diagonal masked"],
    "bug_mask_off_by_one.py": ["mask off by one"],
    "bug_no_mask.py": ["no mask"],
    "bug_no_scaling.py": ["no scaling"],
    "bug_notebook_zero_fill.ipynb": ["zero fill"],
    "bug_scale_by_h.py": ["scaled by 1/H"],
    "bug_scale_by_sqrt_t.py": ["scaled by 1/sqrt(T)"],
    "bug_softmax_query_axis.py": ["softmax over queries"],
    "bug_triu.py": ["triu for tril"],
    "bug_weights_before_softmax.py": ["weights before softmax"],
    "bug_zero_fill.py": ["zero fill"],
    "vacuous_causal_mean.py": ["causal mean"],
    "vacuous_identity.py": [D.UNRECOGNISED],
    "vacuous_zeros.py": [D.UNRECOGNISED],
    "bug_detached.py": [],
    "bug_fixed_T8.py": [],
    "bug_T_from_dim1.py": [],
    "bug_float32_cast.py": [],
    "bug_half_precision.py": [D.UNRECOGNISED],
    "bug_inplace_cpu_bias.py": [],
    "bug_reads_batch_zero.py": [D.UNRECOGNISED],  # no planted bug reads another element's keys
    "bug_scale_by_value_size.py": [],  # the probes have Dv == Dk: sqrt_scaling's message names the size used
    "bug_scale_fixed_d_model.py": [D.UNRECOGNISED],  # likewise the fixed size
    "bug_public_hf_gpt2.py": [],
    "bug_public_pytorch_docs.py": [],
    "bug_fill_neg1e4.py": [],
    "bug_additive_neg1e4.py": [],
    "bug_imports_reference.py": [],
    "bug_inplace_scale.py": [],
    "bug_mask_wrong_device.py": [],
    "bug_mask_cached_by_T.py": [],
}


def test_every_planted_bug_has_an_expected_diagnosis():
    planted = {p.name for p in CH5.iterdir() if p.name.startswith(("bug_", "vacuous_"))}
    assert planted == set(NAMED)


@pytest.mark.parametrize("name", sorted(NAMED))
def test_planted_bug_gets_its_name(grade_of, name):
    grade = grade_of(CH5 / name)
    assert grade.diagnosis == NAMED[name]


@pytest.mark.parametrize("name", ["correct_basic.py", "correct_loop.py", "correct_manual_softmax.py", "correct_sdpa_weights.py"])
def test_correct_code_gets_no_diagnosis_even_when_asked(grade_of, name):
    from grader.grading import rubric
    from grader.grading.engine import Grading

    assert grade_of(CH5 / name).diagnosis == []
    g = Grading(CH5 / name, rubric.load("chapter5"))  # run the comparison anyway (grading skips it when all pass)
    expect = CH5_EX.expect
    try:
        assert g.outcome("loads").status == "passed"
        assert D.diagnose(V, lambda q, k, v, **kw: g.subject.call(q, k, v, expect=expect(q, k, v), **kw)[:2]) == []
    finally:
        g.close()


def as_student(bugs):
    return lambda q, k, v, causal=True: V.plant(q, k, v, causal, bugs=frozenset(bugs))


@pytest.mark.parametrize("name", sorted(V.mistakes))
def test_each_known_mistake_alone_is_recognised(name):
    assert D.diagnose(V, as_student({name})) == [name]


def test_two_mistakes_are_named_together_or_by_an_equivalent_simpler_one():
    for bugs in D.candidates(V):
        got = D.diagnose(V, as_student(bugs))
        if got != sorted(bugs, key=list(V.mistakes).index):
            # the probes cannot separate them: then the simpler diagnosis behaves identically everywhere probed
            assert len(got) < len(bugs) and got != [D.UNRECOGNISED], (bugs, got)
            for (q, k, v), kw in V.probes():
                assert D.matches(V.plant(q, k, v, **kw, bugs=frozenset(got)), V.plant(q, k, v, **kw, bugs=bugs))


def test_unknown_behaviour_is_unrecognised_not_guessed():
    def odd(q, k, v, causal=True):  # a right-looking function with the wrong constant: none of the known mistakes
        out, w = V.plant(q, k, v, causal)
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
