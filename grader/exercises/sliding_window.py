"""Sliding-window attention (Mistral's band mask): `sliding_window_attention(q, k, v, window) -> (out, weights)` with
q, k, v [..., T, H]; query i sees key j when i - window < j <= i (window >= 1; window >= T is causal attention).

The shared checks pass window = max(3, ceil(T / 2)), so that the band cuts off the oldest keys from T = 4 on while
a query sees two keys even under a band one too narrow (which the own checks charge, not the content gate). The own
checks draw the window.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import torch
from hypothesis import strategies as st

from grader.checks.core import Ctx, Failed, check
from grader.checks.format import at, fmt, idx, mismatch, perturb, shape_of
from grader.exercises.base import Exercise, Variants
from grader.exercises.mistakes import common, drawn, negative

CHECKS: dict = {}
own = partial(check, CHECKS)


def reference():
    from grader.reference.sliding_window import sliding_window_attention

    return sliding_window_attention


def band(t: int, window: int) -> torch.Tensor:
    """[T, T]: query i sees key j (i - window < j <= i)."""
    pos = torch.arange(t)
    behind = pos[:, None] - pos[None, :]
    return (behind >= 0) & (behind < window)


def keys(i: int, window: int) -> str:
    """The keys query i sees, in words: 'keys 2..4', or 'key 4 alone'."""
    return f"key {i} alone" if window == 1 else f"keys {max(0, i - window + 1)}..{i}"


def outside(i: int, j: int, window: int | None = None) -> str:
    """Why key j is hidden from query i, in words."""
    if j > i:
        return f"key {j} is in the future of query {i}"
    behind = f"key {j} is {i - j} position{'s' * (i - j != 1)} behind query {i}"
    return f"{behind}, outside its window of {window} ({keys(i, window)})" if window else f"{behind}, outside its window"


@st.composite
def with_window(draw, inputs, below_t: bool = False):
    """Inputs and a window from 1 to T + 1 (to T - 1 when `below_t`: the band then cuts off some key)."""
    x = draw(inputs)
    t = x[0].shape[-2]
    return x, draw(st.integers(1, t - 1 if below_t else t + 1))


@st.composite
def with_cut(draw, windowed):
    """Inputs, a window below T, and a cut: keys before it are outside the window of some query."""
    x = draw(windowed)
    return x, draw(st.integers(1, x[0][0].shape[-2] - x[1]))


@own(
    "band_weights_zero",
    "weights[..., i, j] == 0 for every key outside the window: the future (j > i) and j <= i - window",
    "a band one too wide (torch.triu(mask, diagonal=-window) keeps window + 1 keys), a symmetric band |i - j| < "
    "window that sees the future, the band cut from the wrong side (the first window keys instead of the last), or "
    "no window at all",
    "Query i sees keys i - window + 1 .. i: allowed = (j <= i) & (j > i - window) with i, j = torch.arange(T)[:, "
    "None], torch.arange(T)[None, :]; mask the rest with -inf before the softmax.",
)
def band_weights_zero(ctx: Ctx) -> None:
    def prop(x):
        (q, k, v), window = x
        w = ctx.weights(q, k, v, window=window)
        leak = ~band(q.shape[-2], window) & (w != 0)
        if leak.any():
            i = idx(w, leak)
            raise Failed(f"for {shape_of(q, k, v, window=window)}: {at('weights', i)} = {fmt(float(w[i]))}, expected 0 ({outside(i[-2], i[-1], window)})")

    ctx.prove(with_window(ctx.qkv(t=(2, 8), lead=(1, 2), dtypes=(np.float32, np.float64))), prop)


@own(
    "band_invariance",
    "changing k or v at keys window or more positions behind a query never changes that query's output",
    "keys that fell out of the window still count: a band too wide or cut from the wrong side, a finite fill, or the band applied after the softmax",
    "Only keys i - window + 1 .. i may influence out[..., i, :]: mask every other key with -inf before the softmax.",
)
def band_invariance(ctx: Ctx) -> None:
    blame = {
        "k": "the old keys still change the normalisation (band too wide, or masked after the softmax?)",
        "v": "the old values still reach the output (their weights are not 0: band too wide, or a finite fill?)",
    }

    def prop(x):
        ((q, k, v), window), cut = x  # keys before `cut` are out of the window of every query from cut + window - 1 on
        out = ctx.out(q, k, v, window=window)
        later = (torch.arange(q.shape[-2]) >= cut + window - 1)[:, None]
        rtol, atol = ctx.tol(out.dtype)
        for name in "vk":
            args = {"q": q, "k": k, "v": v}
            args[name] = perturb(args[name], (..., slice(None, cut), slice(None)))
            out2 = ctx.out(args["q"], args["k"], args["v"], window=window)
            changed = later & ~torch.isclose(out2, out, rtol=rtol, atol=atol, equal_nan=True)
            if changed.any():
                i = idx(out, changed)
                old = "key 0 is" if cut == 1 else f"keys 0..{cut - 1} are"
                raise Failed(
                    f"for {shape_of(q, k, v, window=window)}: changing only {name}[..., :{cut}, :] changed {at('out', i)} from "
                    f"{fmt(float(out[i]))} to {fmt(float(out2[i]))}, though {old} outside the window of query {i[-2]} "
                    f"({keys(i[-2], window)}); {blame[name]}"
                )

    ctx.prove(with_cut(with_window(ctx.qkv(t=(2, 7)), below_t=True)), prop)


@own(
    "window_covers_all",
    "a window of T or more cuts nothing off: window = T gives the same result as any larger window",
    "a band one too narrow (window = T still hides key 0 from the last query), or a window that still changes the result once it reaches past position 0",
    "Query i sees keys max(0, i - window + 1) .. i: once window >= i + 1 that is all of 0..i, so window = T is plain causal attention.",
)
def window_covers_all(ctx: Ctx) -> None:
    def prop(x):
        (q, k, v), extra = x
        t = q.shape[-2]
        out, w = ctx.call(q, k, v, window=t)
        out2, w2 = ctx.call(q, k, v, window=t + extra)
        rtol, atol = ctx.tol(q.dtype)
        bad = mismatch("weights", w, w2, rtol, atol) or mismatch("out", out, out2, rtol, atol)
        if bad:
            raise Failed(f"for {shape_of(q, k, v)}: with window = T = {t}, "
                f"{bad.said(f'while window = {t + extra} gives')}; both windows cover every key up to each query")

    ctx.prove(st.tuples(ctx.qkv(lead=(1, 2)), st.integers(1, 3)), prop)


@own(
    "window_one_is_v",
    "with window = 1 each query sees only itself: weights are the identity and out == v",
    "a band off by one: window = 1 then shows a second key (too wide), no key at all (too narrow: NaN), or key 0 (cut from the wrong side)",
    "window counts the keys a query sees, itself included: window = 1 keeps only j == i, so the softmax gives weight "
    "1 there and out[..., i, :] = v[..., i, :].",
)
def window_one_is_v(ctx: Ctx) -> None:
    def prop(x):
        q, k, v = x
        out, w = ctx.call(q, k, v, window=1)
        rtol, atol = ctx.tol(q.dtype)
        eye = torch.eye(q.shape[-2], dtype=q.dtype).expand_as(w)
        bad = mismatch("weights", w, eye, rtol, atol) or mismatch("out", out, v, rtol, atol)
        if bad:
            raise Failed(f"for {shape_of(q, k, v, window=1)}: {bad} (with window = 1, query i sees key i alone)")

    ctx.prove(ctx.qkv(), prop)


# -- planted bugs, for diagnosis ----------------------------------------------------------------------------
MISTAKES = {
    "band one too wide": "the band keeps window + 1 keys (j >= i - window, as torch.triu(mask, diagonal=-window) does); query i sees keys i - window + 1 .. i",
    "band one too narrow": "the band keeps only window - 1 keys (j > i - window + 1); query i sees keys i - window + 1 .. i, itself included",
    "symmetric band": "the band is symmetric (|i - j| < window), so each query also sees the next window - 1 keys of the future",
    "band from the wrong side": "each query sees the first window keys of the sequence (k[..., :window, :]) "
        "instead of the last window keys up to itself (k[..., i - window + 1 : i + 1, :])",
    "window ignored": "the window is never applied: plain causal attention, every query sees every key up to itself",
    **common("no scaling", "zero fill", "softmax over queries"),
}
GROUPS = [
    ("band one too wide", "band one too narrow", "symmetric band", "band from the wrong side", "window ignored"),
    ("no scaling",),
    ("zero fill",),
    ("softmax over queries",),
]


def plant(q, k, v, window: int, bugs: frozenset = frozenset()):
    """The reference with `bugs` (names from MISTAKES) planted: (out, weights)."""
    from grader.reference.planted import attend

    pos = torch.arange(q.shape[-2])
    behind = pos[:, None] - pos[None, :]
    if "band one too wide" in bugs:
        allowed = (behind >= 0) & (behind <= window)
    elif "band one too narrow" in bugs:
        allowed = (behind >= 0) & (behind < window - 1)
    elif "symmetric band" in bugs:
        allowed = behind.abs() < window
    elif "band from the wrong side" in bugs:
        allowed = (behind >= 0) & (pos[None, :] < window)
    elif "window ignored" in bugs:
        allowed = behind >= 0
    else:
        allowed = band(q.shape[-2], window)
    return attend(q, k, v, allowed, bugs)


def probes() -> list[tuple[tuple[torch.Tensor, ...], dict]]:
    """Fixed float32 inputs on which the variants differ: T=5, H=3 (scaling shows), windows 1, 2 and T (each band
    bug shows on one of them), and every score negative (a 0 fill wins there)."""
    x = drawn(2025, (2, 5, 3))
    return [(x, {"window": 2}), (x, {"window": 1}), (x, {"window": 5}), (negative(*x), {"window": 3})]


class SlidingWindow(Exercise):
    def fixed_options(self, q, *rest) -> dict:
        return {"window": max(3, (q.shape[-2] + 1) // 2)}

    def forbidden(self, q, k, v, window: int, **kw) -> torch.Tensor:  # type: ignore[override]  # its own options
        return ~band(q.shape[-2], window)

    def why_forbidden(self, i: int, j: int) -> str:
        return outside(i, j)


EXERCISE = SlidingWindow(
    "sliding_window",
    ("sliding_window_attention",),
    reference,
    checks=CHECKS,
    inputs=("q", "k", "v", "window"),
    variants=Variants(MISTAKES, GROUPS, (), plant, probes),
    forbidden_caption="keys outside the window (j > i, or j <= i - window)",
)
