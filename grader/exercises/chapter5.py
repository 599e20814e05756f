"""Chapter 5: causal self-attention, `scaled_dot_product_attention(q, k, v, causal=True) -> (out, weights)` with
q, k, v [..., T, H] (any leading dims), out [..., T, H] and weights [..., T, T]; future keys masked when causal."""

from __future__ import annotations

from functools import partial

import torch

from grader.checks.core import Ctx, Failed, check
from grader.checks.format import future, mismatch, shape_of
from grader.exercises.base import Exercise, Variants
from grader.exercises.mistakes import common, drawn, large, negative

CHECKS: dict = {}
own = partial(check, CHECKS)


def reference():
    from grader.reference.chapter5 import scaled_dot_product_attention

    return scaled_dot_product_attention


@own(
    "causal_flag_off",
    "with causal=False the future is visible, and only the mask differs from causal=True",
    "the causal flag is ignored, or switching it off changes more than the mask",
    "Apply the mask only `if causal:`; with causal=False it is a plain softmax over all keys.",
)
def causal_flag_off(ctx: Ctx) -> None:
    def prop(x):
        q, k, v = x
        w_off = ctx.weights(q, k, v, causal=False)
        rtol, atol = ctx.tol(w_off.dtype)
        # a softmax gives every key some weight, so no weight on the future is a mask: when the rows are distributions,
        # or when a future score is not 0 ("weights" that are the raw scores, weights_sum_to_one's bug, are 0 there
        # only where the scores are)
        ahead = future(q.shape[-2])
        sums = w_off.sum(-1)
        if not (w_off[..., ahead] != 0).any() and (
                torch.isclose(sums, torch.ones_like(sums), rtol=0, atol=max(atol, 10 * rtol)).all()
                or ((q @ k.transpose(-2, -1))[..., ahead] != 0).any()):
            raise Failed(f"for {shape_of(q, k, v, causal=False)}: every future weight is 0, the mask is still applied")
        w_on = ctx.weights(q, k, v)
        # the last query sees every key either way, so its row must not depend on the flag
        bad = mismatch("weights", w_off[..., -1:, :], w_on[..., -1:, :], rtol, atol)
        if bad:
            raise Failed(f"for {shape_of(q, k, v, causal=False)}: the last query's weights changed with the "
                f"flag, though none of its keys is in the future (last row: {bad})")

    ctx.prove(ctx.qkv(), prop)


# -- planted bugs, for diagnosis ----------------------------------------------------------------------------
# name -> what it means, for the student; names are stable (tests and results.json use them)
MISTAKES = {
    **common("no scaling", "scaled by 1/H", "scaled by 1/sqrt(T)", "no mask"),
    "mask off by one": "the mask lets query i also see key i+1 (tril(diagonal=1)); the allowed keys are j <= i",
    "diagonal masked": "the mask hides the diagonal too (tril(diagonal=-1)): no query sees itself and query 0 sees nothing (NaN)",
    "triu for tril": "the mask keeps the upper triangle (triu): queries see the future instead of the past; use tril",
    **common("zero fill", "mask after softmax", "softmax over queries", "batch mixed", "exp without max", "global max",
             "weights before softmax", "weights before mask"),
    "causal flag ignored": "the mask is applied even when causal=False",
    "causal flag inverted": "the mask is applied when causal=False and not when causal=True (`if not causal:`)",
    **common("causal mean"),
}

# Mistakes within a group exclude each other; a variant has at most one mistake from each of at most two groups.
GROUPS = [
    ("no scaling", "scaled by 1/H", "scaled by 1/sqrt(T)"),
    ("no mask", "mask off by one", "diagonal masked", "triu for tril"),
    ("zero fill",),
    ("mask after softmax",),
    ("softmax over queries", "batch mixed"),
    ("exp without max", "global max"),
    ("weights before softmax", "weights before mask"),
    ("causal flag ignored", "causal flag inverted"),
]
ALONE = ("causal mean",)  # replaces the whole computation: combining it with anything changes nothing


def plant(q, k, v, causal: bool = True, bugs: frozenset = frozenset()):
    """The chapter 5 reference with `bugs` (names from MISTAKES) planted: (out, weights)."""
    from grader.reference.planted import attend

    t = q.shape[-2]
    allowed = torch.ones(t, t, dtype=torch.bool)
    allowed = allowed.triu() if "triu for tril" in bugs else allowed.tril(1 if "mask off by one" in bugs else -1 if "diagonal masked" in bugs else 0)
    flag = (not causal) if "causal flag inverted" in bugs else causal or "causal flag ignored" in bugs
    return attend(q, k, v, allowed, bugs if flag else bugs | {"no mask"})  # chapter 4's causal mean had no flag


def probes() -> list[tuple[tuple[torch.Tensor, ...], dict]]:
    """Fixed float32 inputs on which the variants differ: T=4 != H=3 (so 1/sqrt(T), 1/H, 1/sqrt(H) and 1 differ),
    B=2 (batch mixing), every score negative (a 0 fill wins there), scores past exp's float32 range (no max
    subtraction overflows), and causal=False (the flag)."""
    x = drawn(2024, (2, 4, 3))
    return [(x, {}), (negative(*x), {}), (large(*x), {}), (x, {"causal": False})]


EXERCISE = Exercise(
    "chapter5",
    ("scaled_dot_product_attention", "attention", "causal_attention", "causal_self_attention"),
    reference,
    checks=CHECKS,
    # q, k and v have one size H in chapter 5's contract: a function that reads it from v (HF GPT-2's
    # value.size(-1) ** 0.5) is right here; v of its own size is masked_self_attention's and sdpa_mask's
    value_size=False,
    variants=Variants(MISTAKES, GROUPS, ALONE, plant, probes),
)
