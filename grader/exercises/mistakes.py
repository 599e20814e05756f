"""The mistakes every attention exercise can make, in words, and the probe inputs that show them.

Their planted code is grader.reference.planted (`attend`); the words and the probes are here because a student
build, which has no reference, still names a diagnosis and ships the probes in its book. An exercise's MISTAKES is
its own mistakes and the ones of these it plants, in the order its diagnoses name them.
"""

from __future__ import annotations

import torch

# name -> what it means, for the student, with {h} the exercise's name for the head size (H or D); names are stable
# (tests and results.json use them)
COMMON = {
    "no scaling": "the scores are not divided by sqrt({h})",
    "scaled by 1/H": "the scores are divided by {h} instead of sqrt({h})",
    "scaled by 1/sqrt(T)": "the scores are divided by sqrt(T), the sequence length, instead of sqrt({h}), the head size",
    "no mask": "the mask is never applied, so every query sees every key, the future included",
    "zero fill": "masked scores are filled with 0 instead of -inf, so the keys they hide keep weight exp(0 - max); fill with float('-inf')",
    "mask after softmax": "the masked weights are zeroed after the softmax without renormalising, so rows sum to less than 1; mask the scores before softmax",
    "softmax over queries": "softmax runs over the query axis (dim=-2); it must normalise over the keys, dim=-1",
    "batch mixed": "the softmax sums over the batch as well (e.g. dim=(0, -1)), so batch elements mix; sum over dim=-1 only",
    "exp without max": "softmax is written as exp(s) / sum(exp(s)) without subtracting the row max, which overflows to NaN for large scores",
    "global max": "the softmax subtracts the max of the whole tensor, not of each row, so rows far below it "
        "underflow to 0/0 = NaN; use amax(dim=-1, keepdim=True)",
    "weights before softmax": "the weights returned are the masked scores from before the softmax, not the probabilities",
    "weights before mask": "out is right, but the weights returned are the softmax of the unmasked scores: return the masked ones",
    "causal mean": "the weights are uniform over the visible keys (chapter 4's causal mean) instead of softmax(q k^T / sqrt({h}))",
}


def common(*names: str, head: str = "H") -> dict[str, str]:
    """These common mistakes' words, in this order, the head size called `head`."""
    return {name: COMMON[name].format(h=head) for name in names}


def drawn(seed: int, q_shape: tuple[int, ...], kv_shape: tuple[int, ...] | None = None):
    """Probe inputs: q, k, v drawn from a normal distribution in that order, k and v of q's shape unless given."""
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(shape, generator=g) for shape in (q_shape, kv_shape or q_shape, kv_shape or q_shape))


def negative(q, k, v):
    """q, k, v with every score below 0, where a 0 fill outweighs every key it should hide: q positive, k negative."""
    return q.abs() + 0.5, -(k.abs() + 0.5), v


def large(q, k, v):
    """q, k, v with scores past exp's float32 range, where a softmax without the max subtracted overflows."""
    return 12 * q, 12 * k, v
