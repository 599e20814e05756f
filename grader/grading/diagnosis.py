"""Which known mistake does a submission make? Compare its behaviour with the exercise's known-bug variants.

The variants (the exercise's `Variants`) are the reference with bugs planted, one or two at a time. They run here,
in the grader process (they are reference code: never sent to a worker); the student's outputs on the same few
probe inputs come through the worker like every check. The simplest set of bugs that reproduces the student's out and weights
on every probe is the diagnosis. Nothing fits: "unrecognised" (no guessing). The bug-free reference fits: no
diagnosis (whatever failed is not a mistake in the maths, and the check's own message says what it is).

The same answers also give the submission's behaviour: a digest of what it answered on the probes, when some
answer is not the reference's. Two submissions with the same digest share a bug however differently they are
written (insight.twins), named or not.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable
from dataclasses import dataclass

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
    if variants is None or name not in variants.mistakes:
        return name
    return f"{name}: {variants.mistakes[name]}"


def candidates(variants: Variants) -> list[frozenset]:
    """No mistake first, then every single mistake, then every pair from different groups: simplest first."""
    found: list[frozenset] = [frozenset()] + [frozenset([m]) for m in variants.alone]
    for n in range(1, MAX_MISTAKES + 1):
        for groups in itertools.combinations(variants.groups, n):
            found += [frozenset(c) for c in itertools.product(*groups)]
    return sorted(found, key=len)


def matches(got, want) -> bool:
    return all(a.shape == b.shape and torch.isclose(a.double(), b.double(), RTOL, ATOL, equal_nan=True).all() for a, b in zip(got, want))


@dataclass(frozen=True)
class Diagnosis:
    mistakes: list[str]  # as `diagnose` returns them
    behaviour: str = ""  # digest of the answers on the probes when some are wrong; "" when none is (or random)


def diagnose(variants: Variants | None, call: Callable) -> list[str]:
    """Names of the mistakes that explain the submission's behaviour; [] when it behaves like the reference or
    when nothing could be observed, [UNRECOGNISED] when no variant fits. `call(q, k, v, **kw) -> (out, weights)`
    raises for inputs the submission cannot handle; those probes are left out."""
    return examine(variants, call).mistakes


def examine(variants: Variants | None, call: Callable) -> Diagnosis:
    """The diagnosis, and the behaviour digest of the same answers."""
    if variants is None:
        return Diagnosis([])
    probes = variants.probes()
    seen = []
    answers: list = []  # per probe: its answer, or None where the submission raised
    for inputs, kw in probes:
        try:
            seen.append((inputs, kw, call(*inputs, **kw)))
            answers.append(seen[-1][2])
        except Exception:  # noqa: BLE001 - the checks report what the submission raised; here it just tells nothing
            answers.append(None)
    if not seen:
        return Diagnosis([])
    x, kw, got = seen[0]
    try:
        again = call(*x, **kw)
    except Exception:  # noqa: BLE001 - raising the second time is as random as a different answer
        return Diagnosis([RANDOM])
    if not all(torch.equal(a, b) or torch.allclose(a, b, equal_nan=True) for a, b in zip(got, again)):
        return Diagnosis([RANDOM])  # comparing with the variants would only be noise
    digest = behaviour(variants, probes, answers)
    fits = [bugs for bugs in candidates(variants) if all(matches(got, variants.plant(*x, **kw, bugs=bugs)) for x, kw, got in seen)]
    if not fits:
        return Diagnosis([UNRECOGNISED], digest)
    simplest = [b for b in fits if len(b) == len(fits[0])]
    if len(simplest) > 1:  # the probes cannot tell these apart: do not guess
        return Diagnosis([UNRECOGNISED], digest)
    return Diagnosis(sorted(simplest[0], key=list(variants.mistakes).index), digest)


SIGNIFICANT = 2  # digits a behaviour keeps: the float noise of code written another way never reaches them
TINY = 1e-4  # smaller values count as 0 (exp's underflow differs with the order of operations)


def behaviour(variants: Variants, probes: list, answers: list) -> str:
    """sha256 (16 hex digits) of every probe's answer when some answer is not the reference's, else "".

    Each wrong answer counts by its shapes and values rounded to SIGNIFICANT digits; a right one as "right", a
    raise as "raised". Rounding is what lets independently written code with the same bug agree (its float32
    sums run in another order); a value that falls on a rounding edge in one of them and not the other splits
    such twins, a chance of well under 1 in 100 for these few hundred values."""
    words, wrong = [], False
    for (inputs, kw), got in zip(probes, answers):
        if got is None:
            words.append("raised")
        elif matches(got, variants.plant(*inputs, **kw, bugs=frozenset())):
            words.append("right")
        else:
            wrong = True
            words.append(" ".join(_rounded(t) for t in got))
    return hashlib.sha256("\n".join(words).encode()).hexdigest()[:16] if wrong else ""


def _rounded(t: torch.Tensor) -> str:
    values = t.detach().double().flatten().tolist()
    shape = "x".join(map(str, t.shape))
    return shape + ":" + ",".join("0" if abs(x) < TINY else f"{x:.{SIGNIFICANT - 1}e}" for x in values)
