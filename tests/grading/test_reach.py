"""A submission's reach: the forms each exercise measures (its contract first), how a check's draws narrow to the
forms that work, and how a limitation is worded once."""

import numpy as np
import pytest
import torch

from grader.checks.reach import Form, Reach, named
from grader.exercises import EXERCISES

F32, F64 = torch.float32, torch.float64


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_the_contract_is_measured_first_and_every_form_has_inputs(name):
    exercise = EXERCISES[name]
    forms = exercise.forms()
    layer = exercise.inputs[0] == "d_model"  # CS336's layer: sizes and weights, then in_features [B, T, d_model]
    assert (forms[0].dims, forms[0].dtype, forms[0].dv) == (1 if layer else exercise.lead[0], F32, False)
    assert len(set(forms)) == len(forms)
    for form in forms:
        args, kw = exercise.example(form)
        if layer:
            x = args[-1]
            assert x.dim() == form.dims + 2 and x.dtype == form.dtype and not form.dv
            continue
        q, k, v = args[:3]
        assert q.dim() == form.dims + 2 and q.dtype == v.dtype == form.dtype
        assert (v.shape[-1] != k.shape[-1]) == form.dv


def test_value_size_is_measured_where_the_exercise_has_one():
    assert not any(f.dv for f in EXERCISES["chapter5"].forms())  # q, k, v of one size H: its contract
    assert any(f.dv for f in EXERCISES["masked_self_attention"].forms())
    assert any(f.dv for f in EXERCISES["sdpa_mask"].forms())
    assert not any(f.dv for f in EXERCISES["kv_cache"].forms())


def test_draws_narrow_to_what_works():
    four_d = Reach(works=[Form(2, F32), Form(2, F64)], fails={Form(1, F32): "x", Form(1, F64): "x"})
    assert four_d.dims(1, 1) == (2, 2) and four_d.dims(1, 2) == (2, 2)
    assert four_d.dtypes((np.float32, np.float64)) == (np.float32, np.float64)
    float32_only = Reach(works=[Form(1, F32)], fails={Form(1, F64): "x"})
    assert float32_only.dtypes((np.float64,)) == (np.float32,)  # a float64-only check draws float32 instead
    assert float32_only.dtypes((np.float32, np.float64)) == (np.float32,)
    assert not float32_only.value_size()
    assert Reach().dims(1, 2) == (1, 2)  # nothing known: nothing narrowed


def test_a_limitation_is_worded_once_with_its_cause():
    reach = Reach(works=[Form(2, F32), Form(2, F64)],
                  fails={Form(1, F32): "for q, k, v of shape (2, 5, 4) float32 (T=5, H=4): out has shape (1, 2, 5, 4), expected (2, 5, 4)",
                         Form(1, F64): "the same"},
                  shapes={Form(1, F32): ((1, 2, 5, 4), (2, 5, 4))})  # what the worker's reply says, as data
    text = reach.explain()
    assert text.startswith("your function does not handle [B, T, H] float32, float64 inputs")
    assert "[1, 1, N, N]" in text and "ran on those it handles ([B, heads, T, H] float32, float64)" in text
    assert named([Form(1, F32, True), Form(1, F64, True)]) == "[B, T, H] float32, float64 with Dv != Dk"
    assert Reach(fails={Form(1, F32): "boom"}).explain().startswith("your function handles none of the input forms")
