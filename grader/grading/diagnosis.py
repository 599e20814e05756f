"""Which known mistake does a submission make? Compare its behaviour with the exercise's known-bug variants.

The variants (the exercise's `Variants`) are the reference with bugs planted, one or two at a time. They run here,
in the grader process (they are reference code: never sent to a worker); the student's outputs on the same few
probe inputs come through the worker like every check. The simplest set of bugs that reproduces the student's out and weights
on every probe is the diagnosis. Nothing fits: "unrecognised" (no guessing). The bug-free reference fits: no
diagnosis (whatever failed is not a mistake in the maths, and the check's own message says what it is).
"""

from __future__ import annotations

import itertools
from typing import Callable

import torch

from grader.exercises.base import Variants

UNRECOGNISED = "unrecognised"
RANDOM = "random output"  # not a variant of the reference: seen by calling twice

MAX_MISTAKES = 2
RTOL, ATOL = 1e-3, 1e-5  # loose enough for float32 sums in another order, far tighter than any two variants differ


def explain(name: str, variants: Variants | None) -> str:
    if name == UNRECOGNISED:
        return "unrecognised: your results match none of the known mistakes; follow the counterexamples below"
    if name == RANDOM:
        return (f"{RANDOM}: the same inputs give different results: dropout left on (F.dropout, nn.Dropout in "
                "training mode), torch.rand, or state kept between calls")
    return f"{name}: {variants.mistakes[name]}"


def candidates(variants: Variants) -> list[frozenset]:
    """No mistake first, then every single mistake, then every pair from different groups: simplest first."""
    found = [frozenset()] + [frozenset([m]) for m in variants.alone]
    for n in range(1, MAX_MISTAKES + 1):
        for groups in itertools.combinations(variants.groups, n):
            found += [frozenset(c) for c in itertools.product(*groups)]
    return sorted(found, key=len)


def matches(got, want) -> bool:
    return all(a.shape == b.shape and torch.isclose(a.double(), b.double(), RTOL, ATOL, equal_nan=True).all() for a, b in zip(got, want))


def diagnose(variants: Variants | None, call: Callable) -> list[str]:
    """Names of the mistakes that explain the submission's behaviour; [] when it behaves like the reference or
    when nothing could be observed, [UNRECOGNISED] when no variant fits. `call(q, k, v, **kw) -> (out, weights)`
    raises for inputs the submission cannot handle; those probes are left out."""
    if variants is None:
        return []
    seen = []
    for inputs, kw in variants.probes():
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
    fits = [bugs for bugs in candidates(variants) if all(matches(got, variants.plant(*x, **kw, bugs=bugs)) for x, kw, got in seen)]
    if not fits:
        return [UNRECOGNISED]
    simplest = [b for b in fits if len(b) == len(fits[0])]
    if len(simplest) > 1:  # the probes cannot tell these apart: do not guess
        return [UNRECOGNISED]
    return sorted(simplest[0], key=list(variants.mistakes).index)
