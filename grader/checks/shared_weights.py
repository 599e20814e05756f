"""The shared checks of the weights and the mask (and the registry `SHARED`; checks.shared adds the rest): properties
every attention exercise has, each beside the misconception it catches and its hint. They take their inputs, shapes
and forbidden region from the exercise (`ctx`), so they apply to any attention exercise unchanged; an exercise's own
checks live in its module.

A check's examples are seeded by its id and the order of its `prove` calls (checks.draws), not by their text."""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import torch

from grader.checks import strategies as S
from grader.checks.core import Ctx, Failed, check
from grader.checks.format import at, fmt, idx, mismatch, perturb, query_heads, shape_of

SHARED: dict = {}
shared = partial(check, SHARED)


@shared(
    "output_shape",
    "out has q's shape, weights are [..., T, T], both in the inputs' dtype",
    "shapes or dtypes that only work for one layout (e.g. transpose(1, 2) instead of transpose(-2, -1))",
    "Write the function for any leading dims: use q.size(-1), q.size(-2) and k.transpose(-2, -1), and keep the inputs' dtype.",
)
def output_shape(ctx: Ctx) -> None:
    ctx.charge_reach()

    def prop(x):
        q, k, v = x
        out, w = ctx.call(q, k, v)
        for name, t in (("out", out), ("weights", w)):
            if t.dtype != q.dtype:
                raise Failed(f"for {shape_of(q, k, v)}: {name} has dtype {str(t.dtype).removeprefix('torch.')}, expected {str(q.dtype).removeprefix('torch.')}")

    ctx.prove(ctx.qkv(t=(1, 6), h=(1, 6), lead=(1, 2), dtypes=(np.float32, np.float64), dv=True), prop)


@shared(
    "content_dependent",
    "weights depend on q and k, and out on v",
    "a fixed mixing rule (zeros, a constant, the input itself, or chapter 4's causal mean) instead of attention",
    "Attention weights come from the content: weights = softmax(q @ k^T / sqrt(H)) over the visible keys, out = weights @ v.",
)
def content_dependent(ctx: Ctx) -> None:
    def changes(q, k, v, **options):
        """(out, weights, whether the weights change with k and q, whether out changes with v)."""
        out, w = ctx.call(q, k, v, **options)
        k2 = k.clone()
        k2[..., 0, :] += 2 * q[..., -1, :]  # raises the last query's score on key 0
        w2 = ctx.weights(q, k2, v, **options)
        w3 = ctx.weights(perturb(q, (..., slice(-1, None), slice(None))), k, v, **options)
        v2 = v.clone()
        v2[..., 0, :] += 1
        out3 = ctx.out(q, k, v2, **options)
        return out, w, not (torch.equal(w, w2) and torch.equal(w, w3)), not torch.equal(out, out3)

    def prop(x):
        q, k, v = x
        out, w, weights_move, out_moves = changes(q, k, v)
        for name, t in (("weights", w), ("out", out)):
            if not torch.isfinite(t).any():  # NaN != NaN would pass every "it changed" test below
                raise Failed(f"for {shape_of(q, k, v)} with ordinary values, every entry of {name} is NaN or inf")
        for options in ({}, ctx.exercise.open_options()):
            if weights_move and out_moves:
                break
            # a drawn input can be too regular to show it (heads all alike make a softmax over the heads constant),
            # or the exercise's mask hide what the function sees (a mask read the other way round): the gate asks
            # whether the weights depend on the content at all, so random inputs of these shapes, and with every key
            # visible, decide
            g = torch.Generator().manual_seed(5)
            _, _, weights_move, out_moves = changes(*(torch.randn(t.shape, generator=g, dtype=torch.float64).to(t.dtype)
                                                      for t in (q, k, v)), **options)
        if not weights_move:
            t = q.shape[-2]
            mean = torch.ones(t, t, dtype=w.dtype).tril()
            mean = mean / mean.sum(-1, keepdim=True)
            if torch.allclose(w, mean.expand_as(w), atol=1e-6):
                raise Failed(
                    f"for {shape_of(q, k, v)} the weights are uniform over the past (1/(i+1)) whatever q and k are: "
                    "this is chapter 4's causal mean, not attention"
                )
            raise Failed(f"for {shape_of(q, k, v)}, changing k[..., 0, :] or the last query left every weight unchanged: the weights ignore q and k")
        if not out_moves:
            raise Failed(f"for {shape_of(q, k, v)}, changing v[..., 0, :] left out unchanged: out must be weights @ v")

    ctx.prove(ctx.qkv(t=(2, 5), h=(2, 4), scale=1.0), prop, max_examples=min(ctx.max_examples, 10))


@shared(
    "weights_sum_to_one",
    "each row of weights sums to 1 over the keys",
    "softmax over the wrong axis, weights returned before softmax, or a mask applied after softmax",
    "weights must be a probability distribution over keys: softmax(scores, dim=-1) after masking, and return those.",
)
def weights_sum_to_one(ctx: Ctx) -> None:
    def prop(x):
        q, k, v = x
        w = ctx.weights(q, k, v)
        rtol, atol = ctx.tol(w.dtype)
        sums = w.sum(-1)
        bad = ~torch.isclose(sums, torch.ones_like(sums), rtol=0, atol=max(atol, 10 * rtol))
        if bad.any():
            i = idx(sums, bad)
            raise Failed(f"for {shape_of(q, k, v)}: row {at('weights', i + (':',))} sums to {fmt(float(sums[i]))}, expected 1")

    ctx.prove(ctx.qkv(dtypes=(np.float32, np.float64)), prop)


@shared(
    "future_weights_zero",
    "weights[..., i, j] == 0 for every future key j > i",
    "no causal mask, a mask that is off by one or the wrong triangle, or a finite fill value such as 0",
    "Mask the scores where j > i (torch.tril for the allowed part) with -inf before the softmax, so future keys get exactly 0.",
)
def future_weights_zero(ctx: Ctx) -> None:
    def prop(x):
        q, k, v = x
        w = ctx.weights(q, k, v)
        leak = ctx.forbidden(q, k, v) & (w != 0)
        if leak.any():
            i = idx(w, leak)
            why = ctx.exercise.why_forbidden(i[-2], i[-1])
            raise Failed(f"for {shape_of(q, k, v)}: {at('weights', i)} = {fmt(float(w[i]))}, expected 0 ({why})")

    ctx.prove(ctx.qkv(lead=(1, 2), dtypes=(np.float32, np.float64)), prop)  # [B, heads, T, H] too: T = q.shape[1]


@shared(
    "mask_fill_value",
    "masked positions get exactly 0 weight even when real scores are very negative, or masked ones very high",
    "masking with a finite value such as 0 (masked_fill(mask, 0)) or -1e4 instead of -inf",
    "A masked score must lose against any real score: fill with float('-inf') (or torch.finfo(dtype).min / -1e9 in float32), never 0 or -1e4.",
)
def mask_fill_value(ctx: Ctx) -> None:
    def no_leak(x, large: bool) -> None:
        q, k, v = x
        w = ctx.weights(q, k, v)
        if large and not torch.isfinite(w).all():
            return  # scores this large overflow a softmax without the row max: finite_float32's failure, not this one
        leak = ctx.forbidden(q, k, v) & ((w != 0) | ~torch.isfinite(w))
        if leak.any():
            i = idx(w, leak)
            r, j = i[-2], i[-1]
            kq = query_heads(k, q)
            def score(key):
                return fmt(float((q[i[:-1]] @ kq[i[:-2] + (key,)]) / math.sqrt(q.shape[-1])))
            scores = (f"score[{r}, {r}] = {score(r)} and the masked score[{r}, {j}] = {score(j)}" if large
                      else f"every real score negative (score[{r}, {r}] = {score(r)})")
            raise Failed(
                f"for {shape_of(q, k, v)} with {scores}: {at('weights', i)} = {fmt(float(w[i]))}, expected 0; "
                f"a masked score must lose to every real one, which a finite fill (0, -1e4), or no mask, does not"
            )

    def prop(x):
        no_leak(x, large=False)

    def prop_large(x):  # -1e4 (the old float16 fill) loses to scores of the size finite_float32 draws (to 2.4e4)
        no_leak(x, large=True)

    ctx.prove(ctx.negative_scores(), prop)
    ctx.prove(ctx.negative_scores(size=1.5e4, spread=0.125, future_high=True), prop_large)  # |scores| 1.1e4 to 1.9e4


@shared(
    "future_invariance",
    "changing q, k or v after position i never changes out[..., :i+1, :]",
    "information leaking from the future: no mask, a 0 fill, a mask after softmax, or softmax over queries",
    "Position i may only read positions 0..i: mask before the softmax, normalise over keys, and fill with -inf.",
)
def future_invariance(ctx: Ctx) -> None:
    blame = {
        "q": "the future queries leak into the past (softmax over the query axis?)",
        "k": "the future keys change the normalisation (mask applied after softmax, or no mask?)",
        "v": "the future values reach the past outputs (masked weights are not 0: fill 0 instead of -inf, or no mask?)",
    }

    def prop(x):
        (q, k, v), i = x
        out = ctx.out(q, k, v)
        rtol, atol = ctx.tol(out.dtype)
        sel = (..., slice(i + 1, None), slice(None))
        for name in "vkq":
            args = {"q": q, "k": k, "v": v}
            args[name] = perturb(args[name], sel)
            out2 = ctx.out(args["q"], args["k"], args["v"])
            bad = mismatch("out", out2[..., : i + 1, :], out[..., : i + 1, :], rtol, atol)
            if bad:
                raise Failed(f"for {shape_of(q, k, v)}: changing only {name}[..., {i + 1}:, :] changed {bad.where} (position <= {i}); {blame[name]}")

    ctx.prove(S.with_position(ctx.qkv()), prop)


@shared(
    "softmax_key_axis",
    "each query's weights are normalised over the keys, independently of the other queries",
    "softmax over the query axis (dim=-2 / dim=1) instead of the key axis",
    "Normalise each row: torch.softmax(scores, dim=-1). With dim=-2 every column sums to 1 and queries share weight.",
)
def softmax_key_axis(ctx: Ctx) -> None:
    def prop(x):
        (q, k, v), i = x
        w = ctx.weights(q, k, v)
        others = torch.ones(q.shape[-2], dtype=torch.bool)
        others[i] = False
        w2 = ctx.weights(perturb(q, (..., others, slice(None))), k, v)
        rtol, atol = ctx.tol(w.dtype)
        bad = mismatch("weights", w2[..., i : i + 1, :], w[..., i : i + 1, :], rtol, atol)
        if bad:
            raise Failed(f"for {shape_of(q, k, v)}: changing the other queries changed the weights of query {i} ({bad}); each row must be a softmax over keys")

    ctx.prove(S.with_position(ctx.qkv(), last=True), prop)


@shared(
    "finite_float32",
    "no NaN or inf in float32, large scores included",
    "exp without subtracting the row maximum (overflow), or a mask that hides a whole row (0/0)",
    "Use torch.softmax (it subtracts the row max), and make sure every query can see at least itself (the diagonal).",
)
def finite_float32(ctx: Ctx) -> None:
    def prop(x):
        q, k, v = x
        out, w = ctx.call(q, k, v)
        for name, t in (("out", out), ("weights", w)):
            bad = ~torch.isfinite(t)
            if bad.any():
                i = idx(t, bad)
                top = float((q @ k.transpose(-2, -1)).abs().max() / math.sqrt(q.shape[-1]))
                big = f" with scores up to {fmt(top)} in size" if top > 1 else ""
                raise Failed(f"for {shape_of(q, k, v)}{big}: {at(name, i)} = {float(t[i])}")

    ctx.prove(ctx.qkv(scale=100.0), prop)
