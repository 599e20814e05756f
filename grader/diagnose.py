"""Which known mistake does a submission make? Compare its behaviour with the reference's known-bug variants.

The variants are the reference with bugs planted, one or two at a time. They run here, in the grader process
(they are reference code: never sent to a worker); the student's outputs on the same few probe inputs come
through `Subject.call` like every check. The simplest set of bugs that reproduces the student's out and weights
on every probe is the diagnosis. Nothing fits: "unrecognised" (no guessing). The bug-free reference fits: no
diagnosis (whatever failed is not a mistake in the maths, and the check's own message says what it is).
"""

from __future__ import annotations

import itertools
import math
from typing import Callable

import torch

UNRECOGNISED = "unrecognised"
RANDOM = "random output"  # not a variant of the reference: seen by calling twice

# name -> what it means, for the student; names are stable (tests and results.json use them)
MISTAKES = {
    "no scaling": "the scores are not divided by sqrt(H)",
    "scaled by 1/H": "the scores are divided by H instead of sqrt(H)",
    "scaled by 1/sqrt(T)": "the scores are divided by sqrt(T), the sequence length, instead of sqrt(H), the head size",
    "no mask": "the causal mask is never applied, so every query sees the future",
    "mask off by one": "the mask lets query i also see key i+1 (tril(diagonal=1)); the allowed keys are j <= i",
    "diagonal masked": "the mask hides the diagonal too (tril(diagonal=-1)): no query sees itself and query 0 sees nothing (NaN)",
    "triu for tril": "the mask keeps the upper triangle (triu): queries see the future instead of the past; use tril",
    "zero fill": "future scores are filled with 0 instead of -inf, so future keys keep weight exp(0 - max); fill with float('-inf')",
    "mask after softmax": "the future is zeroed after the softmax without renormalising, so rows sum to less than 1; mask the scores before softmax",
    "softmax over queries": "softmax runs over the query axis (dim=-2 / dim=1); it must normalise over the keys, dim=-1",
    "batch mixed": "the softmax sums over the batch as well (e.g. dim=(0, -1)), so batch elements mix; sum over dim=-1 only",
    "exp without max": "softmax is written as exp(s) / sum(exp(s)) without subtracting the row max, which overflows to NaN for large scores",
    "global max": "the softmax subtracts the max of the whole tensor, not of each row, so rows far below it underflow to 0/0 = NaN; use amax(dim=-1, keepdim=True)",
    "weights before softmax": "the weights returned are the masked scores from before the softmax, not the probabilities",
    "weights before mask": "out is right, but the weights returned are the softmax of the unmasked scores: return the masked ones",
    "causal flag ignored": "the mask is applied even when causal=False",
    "causal flag inverted": "the mask is applied when causal=False and not when causal=True (`if not causal:`)",
    "causal mean": "the weights are uniform over the past (chapter 4's causal mean) instead of softmax(q k^T / sqrt(H))",
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
MAX_MISTAKES = 2
RTOL, ATOL = 1e-3, 1e-5  # loose enough for float32 sums in another order, far tighter than any two variants differ


def explain(name: str) -> str:
    if name == UNRECOGNISED:
        return "unrecognised: your results match none of the known mistakes; follow the counterexamples below"
    if name == RANDOM:
        return (f"{RANDOM}: the same inputs give different results: dropout left on (F.dropout, nn.Dropout in "
                "training mode), torch.rand, or state kept between calls")
    return f"{name}: {MISTAKES[name]}"


def variant(q, k, v, causal: bool = True, bugs: frozenset = frozenset()):
    """The chapter 5 reference with `bugs` (names from MISTAKES) planted: (out, weights)."""
    t, h = q.shape[-2:]
    allowed = torch.ones(t, t, dtype=torch.bool)
    allowed = allowed.triu() if "triu for tril" in bugs else allowed.tril(1 if "mask off by one" in bugs else -1 if "diagonal masked" in bugs else 0)
    flag = (not causal) if "causal flag inverted" in bugs else causal or "causal flag ignored" in bugs
    masked = flag and "no mask" not in bugs
    if "causal mean" in bugs:  # chapter 4 had no causal flag
        w = allowed.to(q.dtype).expand(*q.shape[:-2], t, t)
        w = w / w.sum(-1, keepdim=True)
        return w @ v, w
    scale = {"no scaling": 1.0, "scaled by 1/H": 1 / h, "scaled by 1/sqrt(T)": t**-0.5}
    s = q @ k.transpose(-2, -1) * next((scale[b] for b in bugs if b in scale), h**-0.5)
    dims = (-2,) if "softmax over queries" in bugs else (0, -1) if "batch mixed" in bugs else (-1,)

    def softmax(x):
        top = 0.0 if "exp without max" in bugs else x.amax() if "global max" in bugs else x.amax(dims, keepdim=True)
        e = (x - top).exp()
        return e / e.sum(dims, keepdim=True)

    unmasked = s
    after = masked and "mask after softmax" in bugs
    if masked and not after:
        s = s.masked_fill(~allowed, 0.0 if "zero fill" in bugs else -math.inf)
    w = softmax(s)
    if after:
        w = w * allowed
    returned = s if "weights before softmax" in bugs else softmax(unmasked) if "weights before mask" in bugs else w
    return w @ v, returned


def candidates() -> list[frozenset]:
    """No mistake first, then every single mistake, then every pair from different groups: simplest first."""
    found = [frozenset()] + [frozenset([m]) for m in ALONE]
    for n in range(1, MAX_MISTAKES + 1):
        for groups in itertools.combinations(GROUPS, n):
            found += [frozenset(c) for c in itertools.product(*groups)]
    return sorted(found, key=len)


def probes() -> list[tuple[tuple[torch.Tensor, ...], dict]]:
    """Fixed float32 inputs on which the variants differ: T=4 != H=3 (so 1/sqrt(T), 1/H, 1/sqrt(H) and 1 differ),
    B=2 (batch mixing), every score negative (a 0 fill wins there), scores past exp's float32 range (no max
    subtraction overflows), and causal=False (the flag)."""
    g = torch.Generator().manual_seed(2024)
    q, k, v = (torch.randn(2, 4, 3, generator=g) for _ in range(3))
    negative = (q.abs() + 0.5, -(k.abs() + 0.5), v)
    return [((q, k, v), {}), (negative, {}), ((12 * q, 12 * k, v), {}), ((q, k, v), {"causal": False})]


def matches(got, want) -> bool:
    return all(a.shape == b.shape and torch.isclose(a.double(), b.double(), RTOL, ATOL, equal_nan=True).all() for a, b in zip(got, want))


def diagnose(exercise: str, call: Callable) -> list[str]:
    """Names of the mistakes that explain the submission's behaviour; [] when it behaves like the reference or
    when nothing could be observed, [UNRECOGNISED] when no variant fits. `call(q, k, v, **kw) -> (out, weights)`
    raises for inputs the submission cannot handle; those probes are left out."""
    if exercise != "chapter5":  # the only exercise with variants so far
        return []
    seen = []
    for inputs, kw in probes():
        try:
            seen.append((inputs, kw, call(*inputs, **kw)))
        except Exception:  # noqa: BLE001 - the checks report what the submission raised; here it just tells nothing
            continue
    if not seen:
        return []
    x, kw, got = seen[0]
    try:
        again = call(*x, **kw)
    except Exception:  # noqa: BLE001 - raising the second time is as random as a different answer
        return [RANDOM]
    if not all(torch.equal(a, b) or torch.allclose(a, b, equal_nan=True) for a, b in zip(got, again)):
        return [RANDOM]  # comparing with the variants would only be noise
    fits = [bugs for bugs in candidates() if all(matches(got, variant(*x, **kw, bugs=bugs)) for x, kw, got in seen)]
    if not fits:
        return [UNRECOGNISED]
    simplest = [b for b in fits if len(b) == len(fits[0])]
    if len(simplest) > 1:  # the probes cannot tell these apart: do not guess
        return [UNRECOGNISED]
    return sorted(simplest[0], key=list(MISTAKES).index)
