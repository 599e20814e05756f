"""The prefix LM: `prefix_lm_attention(q, k, v, prefix_len) -> (out, weights)` with q, k, v [B, T, H] or
[B, heads, T, H] and prefix_len an int or a [B] int64 tensor (one length per batch row, shared by its heads); query
i sees key j when j < prefix_len or j <= i (the prompt is bidirectional, the rest causal).

The shared checks pass prefix_len = ceil(T / 2) as an int. The own checks draw it between 0 and T (the two ends are
`prefix_extremes`'); only `per_row_prefix` passes a [B] tensor, so a function that takes only an int loses that
check, not every check. The own checks look at the mask pattern or compare the function with itself, never with the
reference: a slip in the arithmetic (scaling, say) costs `sqrt_scaling` and `reference_match`, not these too.
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
    from grader.reference.prefix_lm import prefix_lm_attention

    return prefix_lm_attention


def visible(t: int, prefix_len, dims: int) -> torch.Tensor:
    """Query i sees key j: [T, T] for an int prefix_len, [B, (1,) T, T] for a [B] tensor and inputs of `dims` dims."""
    pos = torch.arange(t)
    if isinstance(prefix_len, torch.Tensor):
        prefix_len = prefix_len.reshape(-1, *([1] * (dims - 1)))
    return (pos[None, :] <= pos[:, None]) | (pos < prefix_len)


def hidden(i: int, j: int, prefix_len) -> str:
    return f"key {j} is after query {i} and after the prefix, prefix_len = {prefix_len}"


@st.composite
def with_prefix(draw, inputs, low: int = 1):
    """Inputs and an int prefix_len from `low` to T - 1 (some key is after the prefix; 0 and T are prefix_extremes')."""
    x = draw(inputs)
    t = x[0].shape[-2]
    return x, draw(st.integers(low, t - 1))


@st.composite
def with_horizon(draw, prefixed):
    """Inputs, prefix_len < T and a position c >= prefix_len - 1, c < T - 1: no query up to c sees a key after c."""
    x = draw(prefixed)
    t = x[0][0].shape[-2]
    return x, draw(st.integers(max(x[1] - 1, 0), t - 2))


@st.composite
def with_lengths(draw, inputs):
    """Inputs with B >= 2 and a [B] int64 tensor of prefix lengths from 0 to T, not all equal: the last is moved by
    one when they are (a filter would refuse the shrinker's tries, which head for equal zeros)."""
    x = draw(inputs)
    b, t = x[0].shape[0], x[0].shape[-2]
    lengths = [draw(st.integers(0, t)) for _ in range(b)]
    if len(set(lengths)) == 1:
        lengths[-1] += 1 if lengths[-1] < t else -1
    return x, torch.tensor(lengths, dtype=torch.int64)


@own(
    "prefix_visible",
    "every query sees the whole prefix and its own past: weights[..., i, j] > 0 for every j < prefix_len and every j <= i",
    "the prefix never applied (plain causal attention: a prompt token does not see the prompt tokens after it), or a prefix one too short (j < prefix_len - 1)",
    "Allow key j for query i when j < prefix_len or j <= i: allowed = causal | (torch.arange(T) < prefix_len), the "
    "prefix keys as a row broadcast over every query.",
)
def prefix_visible(ctx: Ctx) -> None:
    def prop(x):
        (q, k, v), p = x
        w = ctx.weights(q, k, v, prefix_len=p)
        missed = visible(q.shape[-2], p, q.dim()) & ~(w > 0)
        if missed.any():
            i = idx(w, missed)
            r, j = i[-2], i[-1]
            why = f"key {j} is in the prefix (j < prefix_len = {p})" if j > r else f"key {j} is at or before query {r}"
            raise Failed(f"for {shape_of(q, k, v, prefix_len=p)}: {at('weights', i)} = {fmt(float(w[i]))}, expected more than 0: {why}, so query {r} sees it")

    ctx.prove(with_prefix(ctx.qkv(lead=(1, 2), scale=1.0)), prop)


@own(
    "masked_weights_zero",
    "weights[..., i, j] == 0 for every key after both the query and the prefix (j > i and j >= prefix_len)",
    "the prefix applied to the queries (a prompt query sees the whole sequence), a prefix one too long (j <= "
    "prefix_len), no causal mask, or a finite fill such as 0",
    "Hide key j from query i when j > i and j >= prefix_len: scores.masked_fill(~allowed, float('-inf')) before the "
    "softmax, with allowed = causal | (torch.arange(T) < prefix_len) (prefix keys, not prefix queries).",
)
def masked_weights_zero(ctx: Ctx) -> None:
    def prop(x):
        (q, k, v), p = x
        w = ctx.weights(q, k, v, prefix_len=p)
        leak = ~visible(q.shape[-2], p, q.dim()) & (w != 0)
        if leak.any():
            i = idx(w, leak)
            raise Failed(f"for {shape_of(q, k, v, prefix_len=p)}: {at('weights', i)} = {fmt(float(w[i]))}, expected 0 ({hidden(i[-2], i[-1], p)})")

    ctx.prove(with_prefix(ctx.qkv(lead=(1, 2), dtypes=(np.float32, np.float64))), prop)


@own(
    "masked_invariance",
    "changing q, k or v after position c (c >= prefix_len - 1) never changes out[..., :c+1, :]",
    "information leaking from keys that no earlier query may see: the prefix applied to the queries, a prefix one "
    "too long, a finite fill, the mask applied after the softmax, or softmax over queries",
    "Query i may read only keys j < prefix_len and j <= i: mask every other key with -inf before the softmax, and normalise over the keys (dim=-1).",
)
def masked_invariance(ctx: Ctx) -> None:
    blame = {
        "q": "the later queries leak into the earlier ones (softmax over the query axis?)",
        "k": "the hidden keys change the normalisation (mask after softmax, or keys after the prefix not masked?)",
        "v": "the hidden values reach the output (their weights are not 0: a finite fill, or the prefix applied to the queries?)",
    }

    def prop(x):
        ((q, k, v), p), c = x
        out = ctx.out(q, k, v, prefix_len=p)
        rtol, atol = ctx.tol(out.dtype)
        for name in "vkq":
            args = {"q": q, "k": k, "v": v}
            args[name] = perturb(args[name], (..., slice(c + 1, None), slice(None)))
            out2 = ctx.out(args["q"], args["k"], args["v"], prefix_len=p)
            bad = mismatch("out", out2[..., : c + 1, :], out[..., : c + 1, :], rtol, atol)
            if bad:
                raise Failed(
                    f"for {shape_of(q, k, v, prefix_len=p)}: changing only {name}[..., {c + 1}:, :] changed {bad.where} "
                    f"(position <= {c}), though positions after {c} are after the prefix and after every query up to {c}; {blame[name]}"
                )

    ctx.prove(with_horizon(with_prefix(ctx.qkv(), low=0)), prop)


@own(
    "per_row_prefix",
    "prefix_len as a [B] tensor: each batch row gets what its own length, passed as an int, gives it (heads share it)",
    "one prefix length for the whole batch (prefix_len[0], prefix_len.max()), the lengths broadcast on the wrong "
    "axis (against the queries, or the heads of [B, heads, T, H]), or a function that takes only an int",
    "Line the lengths up with the batch: prefix = torch.arange(T) < prefix_len.view(B, 1, 1) for [B, T, H] inputs "
    "(view(B, 1, 1, 1) for [B, heads, T, H]), then allowed = causal | prefix.",
)
def per_row_prefix(ctx: Ctx) -> None:
    def prop(x):
        (q, k, v), lengths = x
        out, w = ctx.call(q, k, v, prefix_len=lengths)
        rtol, atol = ctx.tol(q.dtype)
        for b, p in enumerate(lengths.tolist()):
            row = (q[b : b + 1], k[b : b + 1], v[b : b + 1])
            one_out, one_w = ctx.call(*row, prefix_len=p)
            bad = mismatch("weights", w[b : b + 1], one_w, rtol, atol) or mismatch("out", out[b : b + 1], one_out, rtol, atol)
            if bad:
                bad = bad.in_element(b).said(f"while row {b} alone with prefix_len = {p} gives")
                raise Failed(f"for {shape_of(q, k, v, prefix_len=lengths)}: {bad}{_as_if(ctx, row, w[b : b + 1], p)}")

    ctx.prove(with_lengths(ctx.qkv(b=(2, 3), lead=(1, 2))), prop)


def _as_if(ctx: Ctx, row, w, p: int) -> str:
    """'; it looks computed with prefix_len = 3': the int length under which the function gives row b these weights."""
    rtol, atol = ctx.tol(w.dtype)
    for m in range(row[0].shape[-2] + 1):
        if m != p and not mismatch("weights", w, ctx.weights(*row, prefix_len=m), rtol, atol):
            return f"; the row looks computed with prefix_len = {m}"
    return ""


@own(
    "prefix_extremes",
    "prefix_len = 0 is causal attention (future keys 0, past keys seen) and prefix_len = T full bidirectional attention (every key seen)",
    "the ends of the range handled apart: the prefix ignored (prefix_len = T stays causal), a boundary off by one "
    "that hides the last token even when the prompt is the whole sequence, or no causal mask once the prefix is empty",
    "Check both ends by hand on T = 2: with prefix_len = 0 only j <= i is allowed, with prefix_len = T every key is.",
)
def prefix_extremes(ctx: Ctx) -> None:
    def prop(x):
        q, k, v = x
        t = q.shape[-2]
        causal = torch.ones(t, t, dtype=torch.bool).tril()
        for p, seen in ((0, causal), (t, torch.ones(t, t, dtype=torch.bool))):
            w = ctx.weights(q, k, v, prefix_len=p)
            wrong = (seen & ~(w > 0)) | (~seen & (w != 0))
            if wrong.any():
                i = idx(w, wrong)
                r, j = i[-2], i[-1]
                what = "expected 0: with no prefix the attention is causal" if not seen[r, j] else (
                    "expected more than 0: " + ("with no prefix the attention is causal" if p == 0 else "with "
                        "the whole sequence as prefix every query sees every key"))
                raise Failed(f"for {shape_of(q, k, v, prefix_len=p)}: {at('weights', i)} = {fmt(float(w[i]))}, {what} (key {j}, query {r})")

    ctx.prove(ctx.qkv(lead=(1, 2), scale=1.0), prop)


# -- planted bugs, for diagnosis ----------------------------------------------------------------------------
MISTAKES = {
    "prefix on queries": "the prefix is applied to the queries (rows): a prompt query sees every key, the "
        "future included; the prefix is a set of keys that every query sees, allowed = causal | (j < prefix_len)",
    "prefix one too long": "the prefix is one too long (j <= prefix_len): key prefix_len, the first generated token, is seen by every query",
    "prefix one too short": "the prefix is one too short (j < prefix_len - 1): the last prompt token is hidden from the prompt tokens before it",
    "prefix ignored": "prefix_len is never applied: plain causal attention, so a prompt token does not see the prompt tokens after it",
    **common("no mask"),
    "one length for the batch": "one prefix length (prefix_len[0]) is used for every row of the batch; row b has its own prefix_len[b]",
    **common("no scaling", "zero fill", "softmax over queries"),
}
GROUPS = [
    ("prefix on queries", "prefix one too long", "prefix one too short", "prefix ignored", "no mask"),
    ("one length for the batch",),
    ("no scaling",),
    ("zero fill",),
    ("softmax over queries",),
]


def plant(q, k, v, prefix_len, bugs: frozenset = frozenset()):
    """The reference with `bugs` (names from MISTAKES) planted: (out, weights)."""
    from grader.reference.planted import attend

    if isinstance(prefix_len, torch.Tensor) and "one length for the batch" in bugs:
        prefix_len = int(prefix_len[0])
    p = prefix_len.reshape(-1, *([1] * (q.dim() - 1))) if isinstance(prefix_len, torch.Tensor) else prefix_len
    pos = torch.arange(q.shape[-2])
    causal = pos[None, :] <= pos[:, None]
    if "prefix on queries" in bugs:
        allowed = causal | (pos[:, None] < p)
    elif "prefix one too long" in bugs:
        allowed = causal | (pos <= p)
    elif "prefix one too short" in bugs:
        allowed = causal | (pos < p - 1)
    elif "prefix ignored" in bugs:
        allowed = causal
    else:
        allowed = causal | (pos < p)  # "no mask" too: attend leaves the mask out
    return attend(q, k, v, allowed, bugs)


def probes() -> list[tuple[tuple[torch.Tensor, ...], dict]]:
    """Fixed float32 inputs on which the variants differ: T=5, H=3 (scaling shows), prefixes of 2 and 3 (each
    boundary bug shows), per-row lengths [3, 1] as a tensor (one length for the batch), and every score
    negative (a 0 fill wins there)."""
    x = drawn(2026, (2, 5, 3))
    return [(x, {"prefix_len": 2}), (x, {"prefix_len": 3}), (x, {"prefix_len": torch.tensor([3, 1])}), (negative(*x), {"prefix_len": 2})]


class PrefixLM(Exercise):
    def fixed_options(self, q, *rest) -> dict:
        return {"prefix_len": (q.shape[-2] + 1) // 2}

    def forbidden(self, q, k, v, prefix_len, **kw) -> torch.Tensor:  # type: ignore[override]  # its own options
        return ~visible(q.shape[-2], prefix_len, q.dim())

    def why_forbidden(self, i: int, j: int) -> str:
        return f"key {j} is after query {i} and after the prefix"


# q, k, v are [B, T, H] or [B, heads, T, H]; prefix_len an int or a [B] int64 tensor.
EXERCISE = PrefixLM(
    "prefix_lm",
    ("prefix_lm_attention",),
    reference,
    checks=CHECKS,
    inputs=("q", "k", "v", "prefix_len"),
    lead=(1, 2),
    variants=Variants(MISTAKES, GROUPS, (), plant, probes),
    forbidden_caption="keys after the query and after the prefix (j > i and j >= prefix_len)",
)
