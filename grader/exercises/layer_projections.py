"""The checks of a layer with given weights (mha_layer, mha_layer_rope) that change the weights: their orientation
(x @ W.T: a column of W_Q, W_K, W_V meets one input feature, a row of W_O makes one output feature), the output
projection applied once (W_O doubled), the heads' order (one head read through W_O, another head's rows moved) and
the scale by the head size (the layer grown by heads of zero weights, or heads padded with zero features).
"""

from __future__ import annotations

from functools import partial

import numpy as np
import torch

from grader.checks.core import Ctx, Failed, check
from grader.checks.format import mismatch
from grader.exercises.layer_inputs import (
    WK,
    WO,
    WQ,
    WV,
    X,
    block,
    drawing,
    more_heads,
    moved,
    out_of,
    replaced,
    said,
    two_heads,
    wider_heads,
    with_feature,
)
from grader.exercises.layer_scales import scale_named

CHECKS: dict = {}
own = partial(check, CHECKS)


@own(
    "weights_transposed",
    "the weights are [d_out, d_in], applied as x @ W.T: column c of W_Q, W_K, W_V meets input feature c, and row o of W_O makes output feature o",
    "x @ W instead of x @ W.T (the weights read as [d_in, d_out]), for the input projections or the output one",
    "Apply each weight as in_features @ W.T (torch.nn.functional.linear(x, W), or einsum('... i, o i -> ... o')).",
)
def weights_transposed(ctx: Ctx) -> None:
    def prop(x):
        args, c = x
        d = args[0]
        xs = torch.zeros_like(args[X])
        xs[..., c] = args[X][..., c]
        args = replaced(args, {X: xs})
        out = out_of(ctx, args)
        others = torch.arange(d) != c
        changed = {}
        for i in (WQ, WK, WV):
            w = args[i].clone()
            w[:, others] = moved(w[:, others])
            changed[i] = w
        bad = mismatch("out", out_of(ctx, replaced(args, changed)), out, *ctx.tol(out.dtype))
        if bad:
            raise Failed(f"for {said(args)} zero but in feature {c}, changing the columns of W_Q, W_K and W_V other "
                         f"than {c} changed {bad.said('before it was')}: with x @ W.T only column {c} meets that "
                         "feature; your projections read W's rows by input feature (x @ W instead of x @ W.T)")
        o = (c + 1) % d
        w = args[WO].clone()
        w[o] = moved(w[o])
        out2 = out_of(ctx, replaced(args, {WO: w}))
        keep = torch.arange(d) != o
        bad = mismatch("out", out2[..., keep], out[..., keep], *ctx.tol(out.dtype))
        if bad:
            raise Failed(f"for {said(args)}, changing row {o} of W_O changed an output feature other than {o} "
                         f"({bad.said('before it was')}): with y @ W_O.T row {o} makes output feature {o} alone; "
                         "your output projection reads W_O as [d_in, d_out] (y @ W_O instead of y @ W_O.T)")

    ctx.prove(with_feature(drawing(ctx, t=(1, 5), size=(2, 3))), prop, max_examples=min(ctx.max_examples, 8))


@own(
    "out_proj_once",
    "the output projection is applied once: doubling W_O doubles out",
    "the concatenated heads returned without W_O, or W_O applied twice",
    "After merging the heads ([..., T, d_model]), multiply once by W_O.T: return y @ o_proj_weight.T.",
)
def out_proj_once(ctx: Ctx) -> None:
    def prop(args):
        out = out_of(ctx, args)
        out2 = out_of(ctx, replaced(args, {WO: 2 * args[WO]}))
        rtol, atol = ctx.tol(out.dtype)
        bad = mismatch("out", out2, 2 * out, rtol, atol)
        if bad:
            how = ("never applied: out did not change" if torch.equal(out2, out) else
                   "applied more than once: out grew 4 times" if not mismatch("out", out2, 4 * out, rtol, atol) else
                   "not applied as y @ W_O.T")
            raise Failed(f"for {said(args)}, doubling W_O should double out: {bad.said('twice the output is')}; the "
                         f"output projection is {how}")

    ctx.prove(drawing(ctx, t=(1, 5)), prop, max_examples=min(ctx.max_examples, 8))


@own(
    "heads_kept_apart",
    "heads are split and merged in the same order: with W_O's columns of head h alone non-zero, out depends on head h's rows of W_Q, W_K, W_V alone",
    "reshape(..., heads, T, d_head) without the transpose (tokens mixed across heads), heads merged as [d_head, heads] "
    "('(d h)' after an '(h d)' split), or heads taken from interleaved features",
    "Split with reshape(*lead, T, heads, d_head).transpose(-3, -2) (einops: '... t (h d) -> ... h t d'); merge back "
    "with transpose(-3, -2).reshape(*lead, T, d_model) ('... h t d -> ... t (h d)').",
)
def heads_kept_apart(ctx: Ctx) -> None:
    def prop(x):
        args, (h, g) = x
        hs = args[0] // args[1]
        w_o = torch.zeros_like(args[WO])
        w_o[:, block(h, hs)] = args[WO][:, block(h, hs)]
        args = replaced(args, {WO: w_o})
        out = out_of(ctx, args)
        changed = {}
        for i in (WQ, WK, WV):
            w = args[i].clone()
            w[block(g, hs)] = moved(w[block(g, hs)])
            changed[i] = w
        bad = mismatch("out", out_of(ctx, replaced(args, changed)), out, *ctx.tol(out.dtype))
        if bad:
            raise Failed(f"for {said(args)}, with W_O's columns of head {h} alone non-zero, changing head {g}'s rows "
                         f"of W_Q, W_K and W_V (rows {g * hs}:{(g + 1) * hs}) changed {bad.said('before it was')}: "
                         f"what head {h} gives depends on head {g}, so the heads are not split and merged in the same "
                         "order")

    ctx.prove(two_heads(drawing(ctx, t=(2, 5), heads=(2, 3), size=(1, 3))), prop)


@own(
    "sqrt_scaling",
    "scores are scaled by 1/sqrt(d_head), the head size, not d_model: more heads of zero weights, or heads padded "
    "with zero features (W_Q doubled to match), leave out unchanged",
    "scaling by 1/sqrt(d_model) (the model width instead of the head size), by 1/d_head, or not at all",
    "Divide each head's scores by math.sqrt(d_head) with d_head = d_model // num_heads (q.size(-1) after the split).",
)
def sqrt_scaling(ctx: Ctx) -> None:
    def prop(args):
        still = ctx.exercise.unturned(args[X])  # RoPE's positions, all equal: its rotations leave the scores as they are
        out = out_of(ctx, args, **still)
        d, hs = args[0], args[0] // args[1]
        heads = f"{args[1]} head{'s' * (args[1] > 1)}"
        grown = {f"adding {heads} of zero weights (d_model {d} -> {2 * d}, d_head {hs} kept)": (more_heads(args), still),
                 f"padding each head with zero features (d_head {hs} -> {4 * hs}, W_Q doubled)":
                 (wider_heads(args), ctx.exercise.unturned(args[X], wider=4))}
        for how, (bigger, kw) in grown.items():
            got = out_of(ctx, bigger, **kw)
            bad = ctx.accurate("out", got[..., :d], out, out.dtype)
            if bad:
                named = scale_named(ctx, got, bigger[0], bigger[0] // bigger[1],
                                    lambda s, big=bigger, kw=kw: ctx.reference(*big, scale=s, **kw)[0])
                raise Failed(f"for {said(args)}{' at token_positions all 0' if still else ''}, {how} changed "
                             f"{bad.said('before it was')}{named}")

    ctx.prove(drawing(ctx, t=(2, 5), size=(1, 3), dtypes=(np.float64,)), prop, max_examples=min(ctx.max_examples, 8))
