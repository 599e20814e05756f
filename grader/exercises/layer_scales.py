"""The wrong scales a layer's output is read against when its scale check fails (mha_layer, mha_module): words
for a verdict already reached, so a reference that cannot answer (a student build's book) only loses them."""

from __future__ import annotations

from collections.abc import Callable

import torch
from hypothesis.errors import UnsatisfiedAssumption

from grader.checks.core import Ctx
from grader.checks.format import fmt
from grader.checks.known_answers import GradedLater

SCALES = {"1/sqrt(d_model)": lambda d, hs: d**-0.5, "no scaling": lambda d, hs: 1.0, "1/d_head": lambda d, hs: 1 / hs,
          "1/d_model": lambda d, hs: 1 / d}


def scale_named(ctx: Ctx, out: torch.Tensor, d: int, hs: int, scaled: Callable[[float], torch.Tensor]) -> str:
    """': your scores are scaled by ...': the wrong scale whose reference output (`scaled(scale)`) is `out`, for a
    layer of width d and heads of size hs."""
    try:
        for name, f in SCALES.items():
            if f(d, hs) != hs**-0.5 and not ctx.accurate("out", out, scaled(f(d, hs)), out.dtype):
                return f": your scores are scaled by {name} = {fmt(f(d, hs))}, expected 1/sqrt(d_head) = {fmt(hs ** -0.5)}"
    except (GradedLater, UnsatisfiedAssumption):  # no known answer for a wrong scale: the verdict stands
        return ""
    return ": the scores' scale depends on something other than the head size"
