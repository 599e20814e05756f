"""The checks of a layer handed in as a class (mha_module) that set the grader's weights into its projections and
change them: the heads' order (one head read through the output projection, another head's rows moved), the scale
by the head size (the layer grown by heads of zero weights, or heads padded with zero features), the output
projection applied once (W_O doubled), and the biases used (b_V and b_O shifted). A layer whose parameters cannot be
told apart fails them, saying which parameters it has and how a rubric names them (module_inputs.needs_weights).
"""

from __future__ import annotations

from functools import partial

import numpy as np
import torch

from grader.checks.core import Ctx, Failed, check
from grader.checks.format import mismatch
from grader.exercises.layer_scales import scale_named
from grader.exercises.module_inputs import (
    drawing,
    grown,
    multihead,
    needs_weights,
    out_of,
    replaced,
    role,
    said,
    two_heads,
)

CHECKS: dict = {}
own = partial(check, CHECKS)


@own(
    "heads_kept_apart",
    "heads are split and merged in the same order: the output projection's columns of head h read head h alone",
    "x.view(B, heads, T, d_head) without the transpose (tokens mixed across heads), or y merged as [d_head, heads] "
    "(permute(0, 2, 3, 1)) instead of [heads, d_head]",
    "Split with q.view(B, T, heads, d_head).transpose(1, 2); merge back with y.transpose(1, 2).contiguous().view(B, T, d).",
)
def heads_kept_apart(ctx: Ctx) -> None:
    present = needs_weights(ctx)
    if not multihead(ctx):
        return  # a layer of one head (its constructor takes no head count): nothing to keep apart

    def prop(x):
        (args, heads), (h, g) = x
        d = args[0].shape[-1]
        hs = d // heads
        block = lambda k: slice(k * hs, (k + 1) * hs)  # noqa: E731
        if "w_o" in present:  # W_O reading head h alone
            w_o = torch.zeros_like(role(args, "w_o"))
            w_o[:, block(h)] = role(args, "w_o")[:, block(h)]
            args = replaced(args, w_o=w_o)
        out = out_of(ctx, args, heads)
        moved = {}
        for name in ("w_q", "w_k", "w_v"):
            w = role(args, name).clone()
            w[block(g)] = -2 * w[block(g)] + 0.5
            moved[name] = w
        out2 = out_of(ctx, replaced(args, **moved), heads)
        seen = (..., slice(None)) if "w_o" in present else (..., block(h))
        bad = mismatch("out", out2[seen], out[seen], *ctx.tol(out.dtype))
        if bad:
            reading = (f"with W_O's columns of head {h} alone non-zero" if "w_o" in present
                       else f"in head {h}'s columns of out")
            raise Failed(f"for {said(args, heads)}, {reading}, changing head {g}'s rows of W_Q, W_K and W_V "
                         f"(rows {g * hs}:{(g + 1) * hs}) changed {bad.said('before it was')}: what head {h} "
                         f"gives depends on head {g}, so the heads are not split and merged in the same order")

    ctx.prove(two_heads(drawing(ctx, present, t=(2, 5), heads=(2, 3), size=(2, 3))), prop)


@own(
    "sqrt_scaling",
    "scores are scaled by 1/sqrt(d_head), the head size, not the model width: more heads of zero weights, or heads "
    "padded with zero features (W_Q doubled to match), leave out unchanged",
    "scaling by 1/sqrt(d_model) (C**-0.5 with C the embedding size, as in the video's first version), by 1/d_head, or not at all",
    "Divide each head's scores by math.sqrt(d_head) with d_head = d_model // heads (k.size(-1) after the split).",
)
def sqrt_scaling(ctx: Ctx) -> None:
    present = needs_weights(ctx)

    def prop(x):
        args, heads = x
        out = out_of(ctx, args, heads)
        d = args[0].shape[-1]
        hs = d // heads
        wider = torch.tensor([h * 4 * hs + r for h in range(heads) for r in range(hs)])  # each old feature's place
        ways = {f"padding each head with zero features (d_head {hs} -> {4 * hs}, W_Q doubled)":
                (grown(args, wider, 4 * d, q_factor=2), heads)}
        if multihead(ctx):
            ways[f"adding {heads} heads of zero weights (d {d} -> {2 * d}, d_head {hs} kept)"] = (
                grown(args, torch.arange(d), 2 * d), 2 * heads)
        for how, (bigger, n) in ways.items():
            got = out_of(ctx, bigger, n)
            bad = ctx.accurate("out", got[..., :d], out, out.dtype)
            if bad:
                d2 = bigger[0].shape[-1]
                named = scale_named(ctx, got, d2, d2 // n, lambda s, big=bigger, n=n: ctx.reference(*big, heads=n, scale=s)[0])
                raise Failed(f"for {said(args, heads)}, {how} changed {bad.said('before it was')}{named}")

    ctx.prove(drawing(ctx, present, t=(2, 5), heads=(2, 3), size=(1, 3), dtypes=(np.float64,)), prop,
              max_examples=min(ctx.max_examples, 8))


@own(
    "out_proj_once",
    "the output projection is applied once, last: doubling W_O and b_O doubles out",
    "the output projection applied twice (c_proj(c_proj(y))) or built and never used",
    "End with return self.c_proj(y) (or self.out_proj(y)), once; dropout after it is fine.",
)
def out_proj_once(ctx: Ctx) -> None:
    present = needs_weights(ctx)
    if "w_o" not in present:
        return  # a layer without an output projection (Raschka's CausalAttention): nothing to apply

    def prop(x):
        args, heads = x
        out = out_of(ctx, args, heads)
        doubled = {"w_o": 2 * role(args, "w_o")} | ({"b_o": 2 * role(args, "b_o")} if "b_o" in present else {})
        out2 = out_of(ctx, replaced(args, **doubled), heads)
        rtol, atol = ctx.tol(out.dtype)
        bad = mismatch("out", out2, 2 * out, 10 * rtol, 10 * atol)
        if bad:
            factor = float((out2 * out).sum() / (out * out).sum().clamp_min(1e-30))
            why = ("out does not change with W_O: the output projection is never applied" if torch.allclose(out2, out)
                   else f"out changed about {factor:.3g} times: the output projection is applied more than once"
                   if factor > 2.5 else "out is not affine in W_O: the output projection is not the last step")
            raise Failed(f"for {said(args, heads)}, doubling W_O{' and b_O' if 'b_O' in doubled else ''} should double "
                         f"out: {bad.said('expected twice')}; {why}")

    ctx.prove(drawing(ctx, present, t=(1, 5)), prop, max_examples=min(ctx.max_examples, 6))


@own(
    "bias_used",
    "each bias the layer has counts: the value bias changes the output, and a shift of the output bias b_O shifts it by as much",
    "biases dropped (F.linear(x, self.c_attn.weight) without the bias), or the output bias added more than once",
    "Apply each projection whole: self.c_attn(x) (or F.linear(x, W, b)), and self.c_proj(y) once.",
)
def bias_used(ctx: Ctx) -> None:
    present = needs_weights(ctx)
    if not {"b_v", "b_o"} & set(present):
        return  # a layer without biases: nothing to add

    def prop(x):
        args, heads = x
        out = out_of(ctx, args, heads)
        d = args[0].shape[-1]
        delta = torch.linspace(-1, 1, d, dtype=out.dtype) + 0.5
        # the value bias passes through the weights into every output; a shift of b_k changes no weight (each score
        # of a query moves alike), nor does one of b_q where the softmax runs over the wrong axis: not asked here
        if "b_v" in present:
            out2 = out_of(ctx, replaced(args, b_v=role(args, "b_v") + delta), heads)
            if torch.equal(out2, out):
                raise Failed(f"for {said(args, heads)}, adding δ = linspace(-1, 1, {d}) + 0.5 to b_v left out "
                             "unchanged: the value projection's bias is dropped")
        if "b_o" in present:
            out2 = out_of(ctx, replaced(args, b_o=role(args, "b_o") + delta), heads)
            rtol, atol = ctx.tol(out.dtype)
            bad = mismatch("the change of out", out2 - out, delta.expand_as(out), 10 * rtol, 10 * atol)
            if bad:
                raise Failed(f"for {said(args, heads)}, adding δ = linspace(-1, 1, {d}) + 0.5 to b_o should shift every "
                             f"output by δ: {bad}; the output projection's bias is dropped or added more than once")

    ctx.prove(drawing(ctx, present, t=(1, 5)), prop, max_examples=min(ctx.max_examples, 6))
