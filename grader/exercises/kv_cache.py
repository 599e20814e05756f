"""Attention with a KV cache: `cached_attention(q, k, v, cache=None) -> (out, weights, (k_all, v_all))` with q, k, v
[B, H, T_new, D] for the new tokens and `cache` None or (k_past, v_past) of [B, H, P, D]; out [B, H, T_new, D],
weights [B, H, T_new, P + T_new] and k_all = cat(k_past, k) on the time dim. New query i sits at position P + i
and sees keys 0 .. P + i. The returned cache may share memory with the inputs; changing the caller's is the bug.

The shared checks call it without a cache (a prefill: plain causal attention); its own checks pass caches: the
grader's (a chunk after a past, the cache returned, the caller's cache unchanged) and the function's own (a prefill,
then decoding token by token).
"""

from __future__ import annotations

from functools import partial

import numpy as np
import torch
from hypothesis import strategies as st

from grader.checks.core import Ctx, Failed, check
from grader.checks.format import at, fmt, idx, mismatch, shape_of
from grader.exercises.base import OUT, WEIGHTS, Exercise, Variants
from grader.exercises.mistakes import common, drawn, large, negative

CHECKS: dict = {}
own = partial(check, CHECKS)
CACHE = {"labels": ["k_all", "v_all"], "what": "cache",
         "names": ["cache", "kv_cache", "new_cache", "present", "past_key_value", "past_key_values"]}


def reference():
    from grader.reference.kv_cache import cached_attention

    return cached_attention


def positions(n: int) -> str:
    return f"{n} position{'' if n == 1 else 's'}"


def past_length(cache) -> int:
    return 0 if cache is None else cache[0].shape[-2]


def visible(t_new: int, p: int, top_left: bool = False) -> torch.Tensor:
    """[T_new, P + T_new]: new query i (position P + i) sees key j when j <= P + i (top_left: j <= i, the bug)."""
    return torch.ones(t_new, p + t_new, dtype=torch.bool).tril(0 if top_left else p)


@st.composite
def with_split(draw, inputs, lo: int, tail: int):
    """Inputs of T positions and a split p with lo <= p <= T - tail: the first p positions are the past."""
    x = draw(inputs)
    return x, draw(st.integers(lo, x[0].shape[-2] - tail))


def split(x: torch.Tensor, p: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The past (positions < p) and the new tokens of x, each contiguous."""
    return x[..., :p, :].clone(), x[..., p:, :].clone()


# The two attention checks compare the function with itself without a cache: a slip it makes either way (a scale,
# a fill value) is the shared checks' business, what the cache changes is theirs.
@own(
    "decode_matches_full",
    "a prefill, then decoding one token at a time with the cache each call returns, gives at every step what the function gives for the whole sequence so far",
    "a new token's mask aligned to the first key instead of the last (it sees only key 0), or a cache that does not carry the past over",
    "Concatenate on the time axis, past first: k_all = torch.cat([k_past, k], dim=-2); a new query at position P + i "
    "sees keys 0 .. P + i, so the mask is torch.ones(T_new, P + T_new).tril(diagonal=P).",
)
def decode_matches_full(ctx: Ctx) -> None:
    def prop(x):
        (q, k, v), p = x
        rtol, atol = ctx.tol(q.dtype)
        *_, k_all, v_all = ctx.call_all(q[..., :p, :], k[..., :p, :], v[..., :p, :])
        for i in range(p, q.shape[-2]):
            upto = (..., slice(None, i + 1), slice(None))
            full_out, full_w = ctx.call(q[upto], k[upto], v[upto])  # positions 0 .. i without a cache
            ctx.focus()  # a failure shows this step's call, with the cache the previous call returned
            now = (..., slice(i, i + 1), slice(None))
            out, w, k_all, v_all = ctx.call_all(q[now], k[now], v[now], cache=(k_all, v_all))
            bad = mismatch("weights", w, full_w[..., i:, :], rtol, atol) or mismatch("out", out, full_out[..., i:, :], rtol, atol)
            if bad:
                raise Failed(
                    f"for {shape_of(q, k, v)}, a prefill of {positions(p)}, then decoding position {i} alone with the "
                    f"cache of {positions(i)} your function returned: {bad.said(f'your function gives for positions 0 .. {i} without a cache')}"
                    + (" (the new token sees only key 0: its mask is aligned to the top-left, tril() without diagonal=P)"
                       if i and bool((w[..., 1:] == 0).all()) else "")
                )

    ctx.prove(with_split(ctx.qkv(t=(2, 6), h=(2, 4)), 1, 1), prop)


@own(
    "chunk_after_past",
    "a chunk of several new tokens after a cached past is masked causally (new query i sees keys 0 .. P + i): it "
    "gives the last rows of the function's result on the whole sequence",
    "the chunk's causal mask aligned to the top-left (tril of [T_new, P + T_new] without diagonal=P: query i sees "
    "only keys 0 .. i), or no mask when a cache is given (a chunk sees its own future)",
    "The new tokens are the last rows of the full causal mask: allowed = torch.ones(T_new, P + T_new, "
    "dtype=torch.bool).tril(diagonal=P), always, cache or not.",
)
def chunk_after_past(ctx: Ctx) -> None:
    def prop(x):
        (q, k, v), p = x
        full_out, full_w = ctx.call(q, k, v)
        (_, qn), (kp, kn), (vp, vn) = split(q, p), split(k, p), split(v, p)
        ctx.focus()  # a failure shows the chunk's call
        out, w = ctx.call(qn, kn, vn, cache=(kp, vp))
        want_out, want_w = full_out[..., p:, :], full_w[..., p:, :]
        rtol, atol = ctx.tol(q.dtype)
        bad = mismatch("weights", w, want_w, rtol, atol) or mismatch("out", out, want_out, rtol, atol)
        if not bad:
            return
        described = shape_of(qn, kn, vn, cache=(kp, vp))
        leak = ctx.forbidden(qn, kn, vn, cache=(kp, vp)) & (w != 0) & (want_w == 0)
        if leak.any():
            i = idx(w, leak)
            r, j = i[-2], i[-1]
            raise Failed(
                f"for {described}: {at('weights', i)} = {fmt(float(w[i]))}, but 0 without a cache: new query {r} is at "
                f"position P + {r} = {p + r} and key {j} is in its future (the chunk sees its own future: no mask with a cache?)"
            )
        top_left = visible(qn.shape[-2], p) & ~visible(qn.shape[-2], p, top_left=True)  # what tril() without diagonal=P hides
        aligned = " (new query i sees only keys 0 .. i: the mask is aligned to the top-left, tril() without diagonal=P)" \
            if bool((w[..., top_left] == 0).all()) and bool((want_w[..., top_left] != 0).any()) else ""
        raise Failed(f"for {described}: {bad.said('your function gives for the whole sequence without a cache')}{aligned}")

    ctx.prove(with_split(ctx.qkv(t=(3, 7), h=(2, 4)), 1, 2), prop)


@own(
    "cache_returned",
    "the returned cache is the past followed by the new keys and values on the time axis, in the inputs' dtype",
    "only the new keys returned, the past and the new keys concatenated in the wrong order or on the wrong dim, or a cache cast to another dtype",
    "Return (torch.cat([k_past, k], dim=-2), torch.cat([v_past, v], dim=-2)); with cache=None that is (k, v) themselves.",
)
def cache_returned(ctx: Ctx) -> None:
    def prop(x):
        (q, k, v), p = x
        (_, qn), (kp, kn), (vp, vn) = split(q, p), split(k, p), split(v, p)
        cache = (kp, vp) if p else None
        _, _, k_all, v_all = ctx.call_all(qn, kn, vn, cache=cache)
        for name, got, want in (("k_all", k_all, k), ("v_all", v_all, v)):
            if got.dtype != want.dtype:
                raise Failed(f"for {shape_of(qn, kn, vn, cache=cache)}: {name} has dtype "
                    f"{str(got.dtype).removeprefix('torch.')}, expected {str(want.dtype).removeprefix('torch.')}")
            bad = mismatch(name, got, want, 0.0, 0.0)
            if bad:
                raise Failed(f"for {shape_of(qn, kn, vn, cache=cache)}: {bad} (the past's {positions(p)}, then the new {positions(qn.shape[-2])})")

    ctx.prove(with_split(ctx.qkv(t=(2, 6), h=(2, 4), dtypes=(np.float32, np.float64)), 0, 1), prop)


@own(
    "cache_unchanged",
    "the caller's k_past and v_past are not modified in place",
    "writing into the caller's cache (copy_, index_copy_, a slice assignment, a rolling buffer) instead of returning a new one",
    "Leave k_past and v_past as they are: k_all = torch.cat([k_past, k], dim=-2) is a new tensor; the caller decides what to keep.",
)
def cache_unchanged(ctx: Ctx) -> None:
    def prop(x):
        (q, k, v), p = x
        (_, qn), (kp, kn), (vp, vn) = split(q, p), split(k, p), split(v, p)
        *_, kp2, vp2 = ctx.call_inputs(qn, kn, vn, cache=(kp, vp))
        for name, a, b in (("k_past", kp, kp2), ("v_past", vp, vp2)):
            bad = ~((a == b) | (a.isnan() & b.isnan()))
            if bad.any():
                i = idx(a, bad)
                raise Failed(f"for {shape_of(qn, kn, vn, cache=(kp, vp))}: your function changed {at(name, i)} from {fmt(float(a[i]))} to {fmt(float(b[i]))}")

    ctx.prove(with_split(ctx.qkv(t=(2, 6), h=(2, 4)), 1, 1), prop, max_examples=min(ctx.max_examples, 10))


# -- planted bugs, for diagnosis ----------------------------------------------------------------------------
MISTAKES = {
    "mask top-left": "the new tokens' mask is the top-left corner of the causal mask (tril of [T_new, P + "
        "T_new] without diagonal=P): new query i sees keys 0 .. i instead of 0 .. P + i",
    "no mask with a cache": "the causal mask is applied only without a cache, so a chunk of new tokens after a past sees its own future",
    **common("no mask"),
    "new keys first": "the new keys and values are put before the past (torch.cat([k, k_past])): the past must come first",
    **common("zero fill", "softmax over queries", "batch mixed", "no scaling", "exp without max", "causal mean", head="D"),
}
GROUPS = [
    ("mask top-left", "no mask with a cache", "no mask"),
    ("new keys first",),
    ("zero fill",),
    ("softmax over queries", "batch mixed"),
    ("no scaling",),
    ("exp without max",),
]
ALONE = ("causal mean",)


def plant(q, k, v, cache=None, bugs: frozenset = frozenset()):
    """The KV-cache reference with `bugs` (names from MISTAKES) planted: (out, weights)."""
    from grader.reference.planted import attend

    if cache is not None:
        k, v = ((torch.cat([x, past], dim=-2) if "new keys first" in bugs else torch.cat([past, x], dim=-2))
                for x, past in ((k, cache[0]), (v, cache[1])))
        bugs = bugs | {"no mask"} if "no mask with a cache" in bugs else bugs
    return attend(q, k, v, visible(q.shape[-2], past_length(cache), top_left="mask top-left" in bugs), bugs)


def probes() -> list[tuple[tuple[torch.Tensor, ...], dict]]:
    """Fixed float32 inputs on which the variants differ: a prefill (no cache), a chunk of 3 new tokens after a past
    of 2, one decoding step after a past of 3, every score negative (a 0 fill wins there) and scores past exp's
    float32 range; T_new, P and D=3 differ."""
    x = drawn(2026, (2, 2, 5, 3))
    at = lambda start, stop: tuple(t[..., start:stop, :] for t in x)  # noqa: E731 - positions start..stop-1
    past, chunk, (_, k3, v3), step = at(0, 2), at(2, 5), at(0, 3), at(3, 4)
    return [(at(0, 4), {}), (chunk, {"cache": past[1:]}), (step, {"cache": (k3, v3)}),
            (negative(*chunk), {"cache": negative(*past)[1:]}), (large(*chunk), {"cache": large(*past)[1:]})]


class KVCache(Exercise):
    def expect(self, q, k, v, cache=None, **kw) -> list[tuple[int, ...]]:
        """out [..., T_new, Dv], weights [..., T_new, P + T_new], k_all and v_all [..., P + T_new, D]."""
        t_all = past_length(cache) + q.shape[-2]
        return [tuple(q.shape[:-1]) + (v.shape[-1],), tuple(q.shape[:-1]) + (t_all,),
                tuple(k.shape[:-2]) + (t_all, k.shape[-1]), tuple(v.shape[:-2]) + (t_all, v.shape[-1])]

    def forbidden(self, q, k, v, cache=None, **kw) -> torch.Tensor:  # type: ignore[override]  # its own options
        """[T_new, P + T_new]: the keys after each new query's own position P + i."""
        return ~visible(q.shape[-2], past_length(cache))

    def example(self, form):
        """The reach is measured as the shared checks call: without a cache (the cache's own checks judge it)."""
        args, _ = super().example(form)
        return args, {}

    def device_inputs(self, q):
        """q's tokens after a past of two positions: the concatenation and the offset mask run on the device too."""
        return (q, q.flip(-2), q * 0.5), {"cache": (q[..., :2, :] - 1, q[..., :2, :] * 2)}

    def device_cases(self, q):
        """The prefill (no cache) and a step after it: each path builds its own mask."""
        return [((q, q.flip(-2), q * 0.5), {"cache": None}), self.device_inputs(q)]


EXERCISE = KVCache(
    "kv_cache",
    ("cached_attention",),
    reference,
    checks=CHECKS,
    results=(OUT, WEIGHTS, CACHE),
    lead=(2, 2),
    variants=Variants(MISTAKES, GROUPS, ALONE, plant, probes),
    forbidden_caption="the future (key j > P + i for new query i at position P + i)",
)
