"""A result read into the exercise's parts (sandbox.worker.returns.adapt): an optional part (the weights a layer may
return beside its output) is read when the grader asks for it, and may be missing in every return style."""

from collections import namedtuple
from dataclasses import dataclass

import pytest
import torch

from grader.sandbox.worker.errors import BadOutput
from grader.sandbox.worker.returns import adapt, checked

OUT = {"labels": ["out"], "what": "output", "names": ["output", "out", "hidden_states"]}
WEIGHTS = {"labels": ["weights"], "what": "weights", "names": ["weights", "attention_weights"], "optional": True}
o, w = torch.zeros(2, 3, 4), torch.ones(2, 1, 3, 3)


@dataclass
class Output:
    hidden_states: torch.Tensor
    attention_weights: torch.Tensor | None = None


Pair = namedtuple("Pair", "out weights")


@pytest.mark.parametrize("result", [(o, w), [o, w], {"out": o, "weights": w}, Output(o, w), Pair(o, w)])
def test_optional_weights_come_back_when_asked_and_stay_behind_when_not(result):
    assert [t is x for t, x in zip(adapt(result, [OUT, WEIGHTS], asked=2), (o, w))] == [True, True]
    got = adapt(result, [OUT, WEIGHTS], asked=1)
    assert len(got) == 1 and got[0] is o


@pytest.mark.parametrize("result", [o, (o,), (o, None), {"hidden_states": o}, Output(o)])
def test_optional_weights_may_be_missing(result):
    got = adapt(result, [OUT, WEIGHTS], asked=2)
    assert len(got) == 1 and got[0] is o


def test_a_required_part_is_still_required():
    required = {**WEIGHTS, "optional": False}
    with pytest.raises(BadOutput, match="returned Tensor"):
        adapt(o, [OUT, required], asked=2)
    with pytest.raises(BadOutput, match="length 3"):
        adapt((o, w, w), [OUT, WEIGHTS], asked=2)


def test_a_tensor_may_have_one_of_several_shapes():
    assert checked(w, "weights", [[2, 2, 3, 3], [2, 1, 3, 3]], "cpu").equal(w)
    with pytest.raises(BadOutput, match=r"expected \(2, 2, 3, 3\) or \(2, 3, 3\)"):
        checked(w, "weights", [[2, 2, 3, 3], [2, 3, 3]], "cpu")
