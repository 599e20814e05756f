"""The weights a layer returns beside its output (mha_layer, mha_layer_rope, mha_module, masked_mha_module): issue
32's layer returns "output [..., T, d_model], weights optional", so `(out, weights)` in any return style costs
nothing, and weights that come back are graded on what a layer's weights must be: their shape, rows that sum to 1,
exactly 0 above the diagonal. A layer that returns its output alone passes these checks (nothing to check), unless
its exercise says the weights are due (`weights_due`: the course's layer returns (hidden_states,
attention_weights)), where `weights_shape` charges their absence once.

Each check asks for the weights itself (Ctx.call_weights); the other checks never do, so weights of a wrong shape
cost these checks alone. An exercise gives the inputs (`weight_draws`: a strategy of (args, kw)), the shapes the
weights may have (`weight_shapes`) and the inputs in words (`said`).
"""

from __future__ import annotations

from functools import partial

import torch

from grader.checks.core import Ctx, Failed, check
from grader.checks.format import at, fmt, idx, mismatch

CHECKS: dict = {}
own = partial(check, CHECKS)

EXAMPLES = 6  # each check's examples at most: the weights' properties show on any input


def weights(ctx: Ctx, args, kw) -> torch.Tensor | None:
    """The weights the layer returns for these inputs, or None when it returns its output alone."""
    return ctx.call_weights(*args, **kw)[1]


def shapes_said(ctx: Ctx, args, kw) -> str:
    return " or ".join(str(tuple(s)) for s in ctx.exercise.weight_shapes(*args, **kw))


@own(
    "weights_shape",
    "the attention weights returned beside the output are [B, H, T, T]: one row per head and query, one column per "
    "key ([B, T, T] for one head)",
    "the weights taken before the heads are split or after they are merged, in another axis order ([B, T, H, T]), "
    "something else returned in their place (the scores of one head, the values), or, where the contract asks for "
    "every head's, their mean [B, T, T] (nn.MultiheadAttention's average_attn_weights=True)",
    "Return the softmax's result as it is, [B, heads, T, T], beside the output: return y, att (or an object with "
    "hidden_states and attention_weights).",
)
def weights_shape(ctx: Ctx) -> None:
    def prop(x):
        args, kw = x
        if weights(ctx, args, kw) is None and ctx.exercise.weights_due:
            raise Failed(f"for {ctx.exercise.said(args, kw)}, your layer returns its output alone: it must return the "
                         f"attention weights beside it, of shape {shapes_said(ctx, args, kw)}")

    ctx.prove(ctx.exercise.weight_draws(ctx), prop, max_examples=min(ctx.max_examples, EXAMPLES))


@own(
    "weights_sum_to_one",
    "each row of the attention weights returned sums to 1 (a softmax over the keys)",
    "the scores returned instead of the weights (before the softmax), weights normalised over the query axis "
    "(softmax(dim=-2)), or renormalised after a mask",
    "Return att = softmax(scores, dim=-1) after the mask, the tensor the values are multiplied by.",
)
def weights_sum_to_one(ctx: Ctx) -> None:
    def prop(x):
        args, kw = x
        w = weights(ctx, args, kw)
        if w is None:
            return  # the output alone: nothing to check (weights_shape says whether they are due)
        sums = w.sum(-1)
        bad = mismatch("weights.sum(-1)", sums, torch.ones_like(sums), *ctx.tol(w.dtype))
        if bad:
            raise Failed(f"for {ctx.exercise.said(args, kw)}, the rows of the weights should sum to 1: "
                         f"{bad.said('expected')}; the weights returned are not a softmax over the keys")

    ctx.prove(ctx.exercise.weight_draws(ctx), prop, max_examples=min(ctx.max_examples, EXAMPLES))


@own(
    "future_weights_zero",
    "the attention weights returned are exactly 0 above the diagonal: no query weighs a key in its future",
    "the weights returned before the causal mask (a softmax of the raw scores kept for inspection while the output "
    "uses the masked ones, or F.scaled_dot_product_attention(is_causal=True) beside an unmasked softmax)",
    "Return the weights the output is computed from: att = softmax(scores.masked_fill(future, -inf), dim=-1), "
    "y = att @ v, return y, att.",
)
def future_weights_zero(ctx: Ctx) -> None:
    def prop(x):
        args, kw = x
        w = weights(ctx, args, kw)
        if w is None:
            return
        t = w.shape[-1]
        leak = torch.ones(t, t, dtype=torch.bool).triu(1) & (w != 0)
        if leak.any():
            ix = idx(w, leak)
            i, j = ix[-2:]
            raise Failed(f"{at('weights', ix)} = {fmt(float(w[ix]))} for {ctx.exercise.said(args, kw)}, expected 0: key "
                         f"{j} is in the future of query {i}; the weights returned are not the causally masked ones")

    ctx.prove(ctx.exercise.weight_draws(ctx), prop, max_examples=min(ctx.max_examples, EXAMPLES))
