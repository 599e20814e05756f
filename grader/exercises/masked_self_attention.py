"""The decoder's masked self-attention with padding: `masked_self_attention(query, key, value, padding_mask=None)`
with query, key, value [B, heads, T, Dk] and padding_mask [B, T] (1 = real token), returning hidden_states
[B, heads, T, Dv] and attention_weights [B, heads, T, T] (a dataclass, NamedTuple, mapping or 2-tuple).

Its own checks: the key padding mask, fully masked rows and the heads axis. Padding masks travel as int64
[B, T] tensors of 1 (real token) and 0 (pad), the LongTensor the course text passes, so a function that only
handles bool masks (`~padding_mask` on ints) fails here with its own error. Exact expectations apply to real
query rows (padding_mask[b, i] == 1); a pad query may compute anything finite, and zeros when it sees no key.
"""

from __future__ import annotations

import functools
from functools import partial

import torch

from grader.checks import strategies as S
from grader.checks.core import Ctx, Failed, check
from grader.checks.format import at, fmt, idx, mismatch, perturb, shape_of
from grader.exercises.base import Exercise

CHECKS: dict = {}
own = partial(check, CHECKS)
OUT, WEIGHTS = "hidden_states", "attention_weights"


def reference():
    from grader.reference.masked import masked_self_attention

    @functools.wraps(masked_self_attention)  # the plan grades its file (grading.engine.record_plan)
    def parts(*args, **kw):  # the reference returns a dataclass; checks compare (out, weights)
        result = masked_self_attention(*args, **kw)
        return result.hidden_states, result.attention_weights

    return parts


def visible(mask: torch.Tensor) -> torch.Tensor:
    """[B, 1, T, T]: query i sees key j (j <= i and key j is a real token)."""
    t = mask.shape[-1]
    return torch.ones(t, t, dtype=torch.bool).tril() & mask.bool()[:, None, None, :]


def real_rows(mask: torch.Tensor) -> torch.Tensor:
    """[B, 1, T, 1]: the query is a real token."""
    return mask.bool()[:, None, :, None]


def padded(mask: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """x's entries at padded positions (every head and feature of a pad token)."""
    return (mask == 0)[:, None, :, None].expand_as(x)


def row(t: torch.Tensor, i: tuple[int, ...]) -> str:
    return "[" + ", ".join(fmt(x) for x in t[i[:3]].tolist()) + "]"


def every_kind():
    """One fixed batch with a left-padded, a right-padded, an all-padding and an unpadded sequence: run after the
    hypothesis search, so each kind is met even when the search drew none of it."""
    g = torch.Generator().manual_seed(6)
    q, k, v = (torch.randn(4, 2, 4, 3, generator=g) for _ in range(3))
    return (q, k, v), torch.tensor([[0, 0, 1, 1], [1, 1, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1]])


def prove_padded(ctx: Ctx, prop, real: bool = True) -> None:
    """`prop` on drawn inputs with a padding mask that has a pad (and, when `real`, a real token), then on
    every_kind()."""
    ctx.prove(S.with_padding(ctx.qkv(), real), prop)
    prop(every_kind())


@own(
    "padding_keys_zero",
    "attention_weights on padded keys are exactly 0 for every real query",
    "the padding mask ignored, applied to the queries ([B, 1, T, 1]) instead of the keys, broadcast on the wrong "
    "axis ([B, 1, T] lines the batch up with the heads), or filled with a finite value such as 0",
    "Mask the keys: allowed = causal[None, None] & padding_mask[:, None, None, :].bool() ([B, 1, 1, T] against [1, "
    "1, T, T]), then masked_fill(~allowed, -inf) before the softmax.",
)
def padding_keys_zero(ctx: Ctx) -> None:
    def prop(x):
        (q, k, v), mask = x
        w = ctx.weights(q, k, v, padding_mask=mask)
        leak = real_rows(mask) & (mask == 0)[:, None, None, :] & (w != 0)
        if leak.any():
            b, _, i, j = ix = idx(w, leak)
            raise Failed(
                f"{at(WEIGHTS, ix)} = {fmt(float(w[ix]))} for padding_mask {mask.tolist()}, expected 0: key {j} of "
                f"sequence {b} is padding and query {i} is a real token; {shape_of(q, k, v)}"
            )

    prove_padded(ctx, prop)


@own(
    "padded_rows_finite",
    "with left padding, right padding or an all-padding sequence, everything is finite; a query that sees only padding gets zeros",
    "softmax over a row whose keys are all masked (a pad at the start of a left-padded sequence, or a sequence of "
    "pads) is 0/0 = NaN, and NaN spreads into the loss; a finite fill (-1e9) instead spreads the weight over masked "
    "keys",
    "After the softmax, zero the rows that see no key: weights = torch.where(allowed, weights, 0.0) (or "
    "weights.nan_to_num(0.0)), then hidden_states = weights @ value.",
)
def padded_rows_finite(ctx: Ctx) -> None:
    def prop(x):
        (q, k, v), mask = x
        out, w = ctx.call(q, k, v, padding_mask=mask)
        seen = visible(mask).any(-1)  # [B, 1, T]: the query sees at least one key
        for name, t in ((OUT, out), (WEIGHTS, w)):
            bad = ~torch.isfinite(t)
            if bad.any():
                i = idx(t, bad)
                what = "NaN" if t[i].isnan() else fmt(float(t[i]))
                why = "sees only padding" if not seen[i[0], 0, i[2]] else "sees at least one real key"
                raise Failed(f"{at(name, i[:3] + (':',))} is {what} for padding_mask {mask.tolist()} (query {i[2]} {why}); {shape_of(q, k, v)}")
        for name, t in ((WEIGHTS, w), (OUT, out)):
            bad = ~seen[..., None] & (t != 0)
            if bad.any():
                i = idx(t, bad)
                raise Failed(
                    f"{at(name, i[:3] + (':',))} = {row(t, i)} for padding_mask {mask.tolist()}, expected zeros: query "
                    f"{i[2]} sees only padding (no real key at or before it); {shape_of(q, k, v)}"
                )

    prove_padded(ctx, prop, real=False)  # all padding included; no padding is finite_float32's case


@own(
    "heads_independent",
    "each head's hidden_states and attention_weights depend only on that head's query, key and value",
    "softmax or another reduction over the heads axis (dim=1), weights averaged over heads, scaling by sqrt(d_model) "
    "= sqrt(heads * Dk), or a reshape that mixes heads with positions",
    "Treat dim 1 as a batch of heads: scale by sqrt(Dk) = sqrt(query.size(-1)), reduce only over the last axis "
    "(softmax(dim=-1)) and keep the [B, heads, T, T] weights of every head.",
)
def heads_independent(ctx: Ctx) -> None:
    def prop(x):
        q, k, v = x
        out, w = ctx.call(q, k, v)
        rest = (slice(None), slice(1, None))
        out2, w2 = ctx.call(perturb(q, rest), perturb(k, rest), perturb(v, rest))
        rtol, atol = ctx.tol(w.dtype)
        bad = mismatch(WEIGHTS, w2[:, :1], w[:, :1], rtol, atol) or mismatch(OUT, out2[:, :1], out[:, :1], rtol, atol)
        if bad:
            raise Failed(f"for {shape_of(q, k, v)}, changing query, key and value of heads 1.. changed head 0: {bad.where}")
        out1, w1 = ctx.call(q[:, :1], k[:, :1], v[:, :1])  # head 0 on its own
        bad = mismatch(WEIGHTS, w1, w[:, :1], rtol, atol) or mismatch(OUT, out1, out[:, :1], rtol, atol)
        if bad:
            raise Failed(
                f"for {shape_of(q, k, v)}, head 0 alone (heads=1) gives {bad.said(f'but among {q.shape[1]} heads')}: "
                "the number of heads changes a head's result (scaled by sqrt(d_model) = sqrt(heads * Dk) instead of sqrt(Dk)?)"
            )

    ctx.prove(ctx.qkv(heads=(2, 3)), prop)


@own(
    "padding_invariance",
    "changing query, key or value at padded positions never changes the results of real tokens",
    "padded tokens leaking into real ones: padding ignored, applied to the queries, filled with 0, or applied after the softmax without renormalising",
    "A pad must be invisible: mask the padded keys with -inf before the softmax, so their values get weight exactly 0.",
)
def padding_invariance(ctx: Ctx) -> None:
    blame = {
        "value": "the padded values reach real tokens (their weights are not 0)",
        "key": "the padded keys change the real tokens' weights (padding not masked before the softmax)",
        "query": "the padded queries change real tokens (a softmax or sum over the query or batch axis?)",
    }

    def prop(x):
        (q, k, v), mask = x
        out, w = ctx.call(q, k, v, padding_mask=mask)
        keep = real_rows(mask)
        rtol, atol = ctx.tol(out.dtype)
        for name in ("value", "key", "query"):
            args = {"query": q, "key": k, "value": v}
            args[name] = perturb(args[name], padded(mask, args[name]))
            out2, w2 = ctx.call(args["query"], args["key"], args["value"], padding_mask=mask)
            def real(a):
                return torch.where(keep, a, 0)  # pad queries' own rows are free
            bad = mismatch(OUT, real(out2), real(out), rtol, atol) or mismatch(WEIGHTS, real(w2), real(w), rtol, atol)
            if bad:
                raise Failed(
                    f"changing only {name} at the padded positions changed {bad.where} (a real token) for "
                    f"padding_mask {mask.tolist()}: {blame[name]}; {shape_of(q, k, v)}"
                )

    prove_padded(ctx, prop)


# q, k, v are [B, heads, T, Dk] exactly; padding_mask [B, T] is a 1/0 int64 tensor (1 = real token).
EXERCISE = Exercise("masked_self_attention", ("masked_self_attention",), reference, checks=CHECKS, lead=(2, 2), heads=(2, 3),
                    value_size=True)
