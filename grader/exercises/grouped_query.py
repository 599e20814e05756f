"""Grouped-query attention: `grouped_query_attention(q, k, v) -> (out, weights)` with q [B, Hq, T, D] and k, v
[B, Hkv, T, D], Hq % Hkv == 0; query head h reads key/value head h // (Hq // Hkv) (the `repeat_kv` /
`repeat_interleave` convention), weights [B, Hq, T, T], future keys masked.

The shared checks draw the grouped case proper: Hkv of 1 (multi-query) or 2, with groups of 2 query heads, so
that tiling the heads instead of interleaving them already shows (content_dependent draws one head of each and
finite_float32 one key/value head: their own code pairs q with k head for head); the own checks take larger
groups and the two ends (Hkv == Hq, Hkv == 1).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

import torch
from hypothesis import strategies as st

from grader.checks import strategies as S
from grader.checks.core import Check, Ctx, Failed, check
from grader.checks.format import idx, mismatch, perturb, query_heads, shape_of
from grader.checks.shared import SHARED
from grader.exercises.base import Exercise, Variants
from grader.exercises.mistakes import common, drawn, large, negative

CHECKS: dict = {}
own = partial(check, CHECKS)


def reference():
    from grader.reference.grouped_query import grouped_query_attention

    return grouped_query_attention


@st.composite
def grouped(draw, kv_heads=(1, 2), groups=(2, 2), **kw):
    """(q, k, v): q [B, Hkv * group, T, H], k and v [B, Hkv, T, H]; kw as for strategies.qkv."""
    hkv, group = draw(st.integers(*kv_heads)), draw(st.integers(*groups))
    return draw(S.qkv(lead=(2, 2), heads=(hkv * group, hkv * group), kv_heads=hkv, **kw))


@st.composite
def grouped_negative(draw, **kw):
    """strategies.negative_scores with Hkv of 1 or 2 and two query heads for each, as `grouped` draws them."""
    q, k, v = draw(S.negative_scores(lead=2, **kw))
    return torch.cat([q, q.flip(-1)], dim=1), k, v  # a permuted q keeps every score in the drawn range


def differing_head(pairs, rtol: float, atol: float) -> int:
    """The query head (dim 1) where the first (got, want) pair that differs first differs, as `mismatch` finds it."""
    for got, want in pairs:
        bad = ~torch.isclose(got.to(want.dtype), want, rtol=rtol, atol=atol, equal_nan=True)
        if bad.any():
            return idx(got, bad)[1]
    raise ValueError("no pair differs")


def heads_read(ctx: Ctx, q, k, v, out, w, h: int) -> int | None:
    """The key/value head with which the function, given query head h alone, reproduces that head's out and weights."""
    rtol, atol = ctx.tol(w.dtype)
    for j in range(k.shape[1]):
        out_j, w_j = ctx.call(q[:, h : h + 1], k[:, j : j + 1], v[:, j : j + 1])
        if not (mismatch("weights", w[:, h : h + 1], w_j, rtol, atol) or mismatch("out", out[:, h : h + 1], out_j, rtol, atol)):
            return j
    return None


def tiled(h: int, j: int, hkv: int) -> str:
    """The usual cause when query head h reads key/value head j instead of its own."""
    return (f"; {h} % {hkv} = {j}: the heads are tiled (k.repeat(1, g, 1, 1), or expand on a new axis before the "
            "heads) instead of repeat-interleaved" if h % hkv == j else "")


@own(
    "kv_head_groups",
    "each query head reads only its own key/value head, h // (Hq // Hkv)",
    "the heads paired the wrong way: k.repeat(1, g, 1, 1) or an expand on a new axis before the heads tiles them "
    "(query head h reads key/value head h % Hkv), or a softmax or sum over the heads axis mixes them",
    "Repeat each key/value head for its group, in order: k.repeat_interleave(g, dim=1) with g = Hq // Hkv (or k[:, "
    ":, None].expand(B, Hkv, g, T, D).reshape(B, Hq, T, D)), then ordinary attention per head.",
)
def kv_head_groups(ctx: Ctx) -> None:
    def prop(x):
        q, k, v = x
        out, w = ctx.call(q, k, v)
        hq, hkv = q.shape[1], k.shape[1]
        group = hq // hkv
        rtol, atol = ctx.tol(w.dtype)
        for j in range(hkv):
            sel = (slice(None), slice(j, j + 1))
            out2, w2 = ctx.call(q, perturb(k, sel), perturb(v, sel))
            others = torch.tensor([h // group != j for h in range(hq)])[None, :, None, None]  # query heads of other groups
            bad = (mismatch("weights", torch.where(others, w2, w), w, rtol, atol)
                   or mismatch("out", torch.where(others, out2, out), out, rtol, atol))
            if bad:
                h = differing_head([(torch.where(others, w2, w), w), (torch.where(others, out2, out), out)], rtol, atol)
                raise Failed(
                    f"for {shape_of(q, k, v)}: changing key/value head {j} changed query head {h} "
                    f"({bad.where}), which belongs to key/value head {h} // {group} = {h // group}"
                    + tiled(h, j, hkv)
                )

    ctx.prove(grouped(kv_heads=(2, 3), groups=(2, 3), t=(2, 5), h=(2, 4)), prop)


@own(
    "repeat_kv_equivalent",
    "equals the function's own multi-head attention on k and v repeat-interleaved to Hq heads",
    "a grouping other than repeat_interleave's (heads tiled, or positions mixed into heads by a reshape), or code that works only for one ratio Hq / Hkv",
    "grouped_query_attention(q, k, v) must equal grouped_query_attention(q, k.repeat_interleave(g, dim=1), "
    "v.repeat_interleave(g, dim=1)) with g = Hq // Hkv; check that identity on a small input.",
)
def repeat_kv_equivalent(ctx: Ctx) -> None:
    # The function against itself: numerical slips common to both calls are the shared checks' business.
    def prop(x):
        q, k, v = x
        out, w = ctx.call(q, k, v)
        mha_out, mha_w = ctx.call(q, query_heads(k, q), query_heads(v, q))
        rtol, atol = ctx.tol(w.dtype)
        bad = mismatch("weights", w, mha_w, rtol, atol) or mismatch("out", out, mha_out, rtol, atol)
        if bad:
            group, hkv = q.shape[1] // k.shape[1], k.shape[1]
            h = differing_head([(w, mha_w), (out, mha_out)], rtol, atol)
            j = heads_read(ctx, q, k, v, out, w, h)
            read = (f"; query head {h} attends like key/value head {j}, but it belongs to head {h} // {group} = {h // group}"
                    + tiled(h, j, hkv)) if j is not None and j != h // group else ""
            raise Failed(f"for {shape_of(q, k, v)}: {bad.said(f'your function on k, v repeat-interleaved {group} times gives')}{read}")

    ctx.prove(grouped(kv_heads=(2, 3), groups=(2, 3), t=(2, 5), h=(2, 4)), prop)


@own(
    "mha_and_mqa",
    "with Hkv == Hq (multi-head) and with Hkv == 1 (multi-query), each query head gives what it gives alone with its key/value head",
    "the group size and the number of groups confused (k repeated Hkv times instead of Hq // Hkv), a scale by "
    "sqrt(Hq * D) instead of sqrt(D), or code that assumes 1 < Hkv < Hq",
    "g = Hq // Hkv query heads share each key/value head: g is 1 when Hkv == Hq (nothing to repeat) and Hq when Hkv == 1; scale by sqrt(D), D = q.size(-1).",
)
def mha_and_mqa(ctx: Ctx) -> None:
    def prop(x):
        q, k, v = x
        out, w = ctx.call(q, k, v)
        rtol, atol = ctx.tol(w.dtype)
        group = q.shape[1] // k.shape[1]
        kind = "multi-head attention (Hkv == Hq)" if group == 1 else "multi-query attention (Hkv == 1)"
        for h in range(q.shape[1]):
            j = h // group
            out1, w1 = ctx.call(q[:, h : h + 1], k[:, j : j + 1], v[:, j : j + 1])
            bad = mismatch("weights", w1, w[:, h : h + 1], rtol, atol) or mismatch("out", out1, out[:, h : h + 1], rtol, atol)
            if bad:
                raise Failed(
                    f"for {shape_of(q, k, v)}, {kind}: query head {h} alone with key/value head {j} gives "
                    f"{bad.said(f'but among {q.shape[1]} query heads')}: the number of heads changes a head's result"
                )

    ends = st.integers(2, 4).flatmap(lambda hq: st.sampled_from([1, hq]).flatmap(
        lambda hkv: grouped(kv_heads=(hkv, hkv), groups=(hq // hkv, hq // hkv), t=(2, 5), h=(2, 4))))
    ctx.prove(ends, prop)


# -- planted bugs, for diagnosis ----------------------------------------------------------------------------
MISTAKES = {
    "heads tiled": "k and v are tiled to Hq heads (k.repeat(1, g, 1, 1), or expand on a new axis before the "
        "heads): query head h reads key/value head h % Hkv instead of h // g; use k.repeat_interleave(g, dim=1)",
    "time and heads mixed": "k and v are expanded on a new axis after the time axis (unsqueeze(-2) instead of "
        "unsqueeze(2)) before the reshape to Hq heads, so each query head reads a jumble of positions, the "
        "future included",
    **common("no scaling", head="D"),
    "scaled by sqrt(Hq * D)": "the scores are divided by sqrt(Hq * D), the model width, instead of sqrt(D), the head size",
    **common("no mask", "zero fill", "softmax over queries", "batch mixed", "exp without max", "causal mean", head="D"),
}
GROUPS = [
    ("heads tiled", "time and heads mixed"),
    ("no scaling", "scaled by sqrt(Hq * D)"),
    ("no mask", "zero fill"),
    ("softmax over queries", "batch mixed"),
    ("exp without max",),
]
ALONE = ("causal mean",)


def plant(q, k, v, bugs: frozenset = frozenset()):
    """The grouped-query reference with `bugs` (names from MISTAKES) planted: (out, weights)."""
    from grader.reference.planted import attend

    b, hq, t, d = q.shape
    hkv = k.shape[1]
    g = hq // hkv
    if "heads tiled" in bugs:
        k, v = k.repeat(1, g, 1, 1), v.repeat(1, g, 1, 1)
    elif "time and heads mixed" in bugs:
        k, v = (x.unsqueeze(-2).expand(b, hkv, t, g, x.shape[-1]).reshape(b, hq, t, x.shape[-1]) for x in (k, v))
    else:
        k, v = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
    width = (hq * d) ** -0.5 if "scaled by sqrt(Hq * D)" in bugs else None
    return attend(q, k, v, torch.ones(t, t, dtype=torch.bool).tril(), bugs, scale=width)


def probes() -> list[tuple[tuple[torch.Tensor, ...], dict]]:
    """Fixed float32 inputs on which the variants differ: Hq=4 query heads on Hkv=2 key/value heads (tiling shows),
    T=4 != D=3, every score negative (a 0 fill wins there), scores past exp's float32 range, and multi-query."""
    q, k, v = x = drawn(2025, (2, 4, 4, 3), (2, 2, 4, 3))
    return [(x, {}), (negative(*x), {}), (large(*x), {}), ((q, k[:, :1], v[:, :1]), {})]


@dataclass(frozen=True)
class GroupedQuery(Exercise):
    kv_heads: tuple[int, int] = (1, 2)  # the shared checks' Hkv, and query heads per key/value head
    groups: tuple[int, int] = (2, 2)

    def qkv(self, lead=(1, 1), **kw):
        """The grouped case proper: Hkv of 1 or 2 with groups of 2 (the own checks draw their own shapes)."""
        return grouped(self.kv_heads, self.groups, **kw)

    def negative_scores(self, **kw):
        return grouped_negative(**kw)

    def device_inputs(self, q):
        """k and v with one head for q's heads (multi-query when q has 2): the grouping runs on the device too."""
        return (q, q[:, :1].flip(-2), q[:, :1] * 0.5), {}


EXERCISE = GroupedQuery(
    "grouped_query",
    ("grouped_query_attention",),
    reference,
    checks=CHECKS,
    lead=(2, 2),
    variants=Variants(MISTAKES, GROUPS, ALONE, plant, probes),
)


def drawing(shared: Check, kv_heads: tuple[int, int], groups: tuple[int, int]) -> Check:
    """`shared` with its inputs drawn with these head counts (the grading's exercise otherwise as it is)."""
    return replace(shared, run=lambda ctx: shared.run(replace(ctx, exercise=replace(ctx.exercise, kv_heads=kv_heads,
                                                                                    groups=groups))))


# Two shared checks pair q with k head for head in their own code: content_dependent adds q's last query to k (one
# head each: a slip in the grouping must not cost the gate), finite_float32 words the scores q @ k^T (multi-query).
CHECKS["content_dependent"] = drawing(SHARED["content_dependent"], (1, 1), (1, 1))
CHECKS["finite_float32"] = drawing(SHARED["finite_float32"], (1, 1), (2, 2))
