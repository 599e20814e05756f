"""Causal multi-head self-attention handed in as an `nn.Module` class (issue 32, part 2): Raschka's
`CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)` and `MultiHeadAttention(..., num_heads)`,
Karpathy's `MultiHeadAttention(num_heads, head_size)`, nanoGPT's and minGPT's `CausalSelfAttention(config)` with a
fused `c_attn`, CS224N's separate `query` / `key` / `value`, a wrapped `nn.MultiheadAttention`.

The worker builds the class from its own constructor and sets the weights the grader drew into its projections
(sandbox.worker.modules); a call is `layer(x, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, heads=H)` with x [B, T, d],
weights [d, d] applied as `x @ W.T + b` and None for what the layer has no place for (a bias it lacks, the output
projection of a layer without one). Every layer is built with context length `CONTEXT` and dropout `DROPOUT`, and
called in eval(). The checks need no weights to see causality, batch independence, determinism and devices; the
others set the weights, and say so when the layer's parameters cannot be told apart.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

import numpy as np
import torch

from grader.checks.core import Ctx, Failed, check
from grader.checks.format import future, mismatch
from grader.checks.reach import Form
from grader.exercises import layer_weights, module_projections as projections
from grader.exercises.base import OPTIONAL_WEIGHTS, OUT, Exercise
from grader.exercises.module_inputs import (
    CONTEXT,
    DROPOUT,
    LONG,
    PARAMS,
    ROLES,
    WEIGHTS,
    LayerForm,
    changed_token,
    drawing,
    mapped,
    multihead,
    needs_weights,
    out_of,
    replaced,
    role,
    said,
    weights,
    with_token,
)

CHECKS: dict = {}
own = partial(check, CHECKS)


def reference():
    from grader.reference.mha_module import multihead_attention

    return multihead_attention


# -- the checks ---------------------------------------------------------------------------------------------------
@own(
    "output_shape",
    "out is [B, T, d] in x's dtype, for every T up to the context length and past it, in float32 and float64",
    "a registered causal buffer of the context length ([1, 1, N, N] tril, sliced [:T, :T]) that fails for a longer "
    "input, or a layer that works in float32 only",
    "Build the mask for the input you get: torch.ones(T, T, device=x.device).tril() per call (or "
    "F.scaled_dot_product_attention(..., is_causal=True)), and keep x's dtype.",
)
def output_shape(ctx: Ctx) -> None:
    ctx.charge_reach(explain)  # every other check runs on T <= CONTEXT

    def prop(x):
        args, heads = x
        out = out_of(ctx, args, heads)
        if out.dtype != args[0].dtype:
            raise Failed(f"for {said(args, heads)}: out has dtype {str(out.dtype).removeprefix('torch.')}, expected "
                         f"{str(args[0].dtype).removeprefix('torch.')}")

    ctx.prove(drawing(ctx, mapped(ctx), dtypes=(np.float32, np.float64)), prop, max_examples=min(ctx.max_examples, 6))


def explain(reach) -> str:
    if reach.leading:
        return reach.leading
    first = next(iter(reach.fails.values()))
    if reach.none:
        return f"your layer handles none of the inputs tried ({', '.join(f.words() for f in reach.fails)}):\n{first}"
    long = [f for f in reach.fails if getattr(f, "long", False)]
    if long and len(long) == len(reach.fails):
        return (f"your layer, built with a context length of {CONTEXT}, fails on a longer input (T = {LONG}): "
                f"{reach.fails[long[0]]}\nA causal mask registered at the context length ([1, 1, N, N], sliced "
                f"[:T, :T]) cannot serve a longer T; that costs these points once, and the other checks ran with "
                f"T <= {CONTEXT}.")
    return (f"your layer does not handle {', '.join(f.words() for f in reach.fails)} inputs; the other checks ran on "
            f"those it handles ({', '.join(f.words() for f in reach.works)}).\n{first}")


@own(
    "content_dependent",
    "each output mixes the earlier tokens by attention: it changes with an earlier token, and with the queries and keys",
    "a layer that returns x, or the values alone (c_proj(v)), or mixes tokens by a fixed rule that ignores q and k",
    "out[:, i] = W_O softmax(q_i k_j^T / sqrt(d_head) for j <= i) v_j: compute the scores from the queries and keys and use them.",
)
def content_dependent(ctx: Ctx) -> None:
    present = mapped(ctx)

    def prop(x):
        args, heads = x
        out = out_of(ctx, args, heads)
        if not torch.isfinite(out).all():
            raise Failed(f"for {said(args, heads)} with ordinary values, out holds NaN or inf")
        last = args[0].shape[1] - 1
        out2 = out_of(ctx, (changed_token(args[0], 0, 0), *args[1:]), heads)
        if torch.equal(out2[0, last], out[0, last]):
            raise Failed(f"for {said(args, heads)}, changing x[0, 0] left out[0, {last}] unchanged: each output reads "
                         f"its own token only, not the earlier ones by attention")
        for name in ("w_q", "w_k"):
            if name in present:
                out3 = out_of(ctx, replaced(args, **{name: -2 * role(args, name) + 0.5}), heads)
                if torch.equal(out3, out):
                    raise Failed(f"for {said(args, heads)}, changing {name.upper().replace('_', '_')} left out "
                                 f"unchanged: the attention weights ignore the {'queries' if name == 'w_q' else 'keys'}")

    ctx.prove(drawing(ctx, present, t=(2, 5)), prop, max_examples=min(ctx.max_examples, 8))


@own(
    "future_invariance",
    "changing token j of x never changes an output at a position i < j (causality over the input)",
    "no causal mask, the wrong triangle, a mask after the softmax, softmax over the query axis, or heads split so that tokens mix (view without the transpose)",
    "Mask the scores where j > i with -inf before the softmax over the keys (dim=-1), and split the heads with x.view(B, T, heads, d_head).transpose(1, 2).",
)
def future_invariance(ctx: Ctx) -> None:
    def prop(x):
        (args, heads), j = x
        out = out_of(ctx, args, heads)
        out2 = out_of(ctx, (changed_token(args[0], 0, j), *args[1:]), heads)
        rtol, atol = ctx.tol(out.dtype)
        bad = mismatch("out", out2[0:1, :j], out[0:1, :j], rtol, atol)
        if bad:
            i = bad.index[1]
            raise Failed(f"for {said(args, heads)}: changing x[0, {j}] changed out[0, {i}] ({bad.said('before it was')}): "
                         f"position {i} sees token {j}, which is in its future")

    ctx.prove(with_token(drawing(ctx, mapped(ctx), t=(2, CONTEXT))), prop)


@own(
    "batch_independence",
    "each batch element's output depends only on that element",
    "a reshape that mixes the batch dim (view(T, B, ...)), or a reduction over the whole tensor",
    "Keep the batch dim first and apart: B, T, C = x.size(), then view(B, T, heads, d_head); reduce only over keys.",
)
def batch_independence(ctx: Ctx) -> None:
    def prop(x):
        args, heads = x
        out = out_of(ctx, args, heads)
        rtol, atol = ctx.tol(out.dtype)
        for b in range(args[0].shape[0]):
            alone = out_of(ctx, (args[0][b : b + 1], *args[1:]), heads)
            bad = mismatch("out", alone, out[b : b + 1], rtol, atol)
            if bad:
                raise Failed(f"for {said(args, heads)}, batch element {b} on its own (B=1) gives "
                             f"{bad.in_element(b).said(f'within the batch of {args[0].shape[0]}:')}: its output "
                             "depends on the other batch elements")

    ctx.prove(drawing(ctx, mapped(ctx), b=(2, 3)), prop, max_examples=min(ctx.max_examples, 8))


# the checks that set the weights and change them (heads kept apart, the scale, W_O once, the biases), in this place
# of the catalogue
CHECKS.update(projections.CHECKS)


TRAIN_NOTES = {
    True: f"in train() (built with dropout={DROPOUT}) your layer's output changed from call to call: dropout is on in "
          "training, as it should be (not graded)",
    False: f"in train() (built with dropout={DROPOUT}) your layer gave the same output twice: it applies no dropout in "
           "training (not graded)",
}


@own(
    "eval_deterministic",
    "in eval() the same input gives the same output (dropout off)",
    "dropout applied whatever the mode: F.dropout(att, p) (training defaults to True), or nn.functional.dropout without training=self.training",
    "Use self.attn_dropout = nn.Dropout(p) and call it (it follows .eval()), or pass training=self.training to "
    "F.dropout / dropout_p=self.dropout if self.training else 0 to SDPA.",
)
def eval_deterministic(ctx: Ctx) -> None:
    def prop(x):
        args, heads = x
        out = out_of(ctx, args, heads)
        again = out_of(ctx, args, heads)
        bad = mismatch("out", again, out, 0.0, 0.0)
        if bad:
            raise Failed(f"for {said(args, heads)} in eval(), the same input gave {bad.said('and then')}: the output "
                         "is random in eval() mode (dropout still on?)")

    ctx.prove(drawing(ctx, mapped(ctx), t=(2, 5)), prop, max_examples=min(ctx.max_examples, 4))
    g = torch.Generator().manual_seed(3)
    args = (torch.randn(2, 5, 8, generator=g), *weights(g, 8, mapped(ctx), torch.float32))
    try:
        first, second = (out_of(ctx, args, 2 if multihead(ctx) else 1, train=True) for _ in range(2))
    except Failed:
        return  # train() is not graded
    note = TRAIN_NOTES[not torch.equal(first, second)]
    if note not in ctx.notes:
        ctx.notes.append(note)


@own(
    "device_placement",
    "works when x and the weights live on another device (GPU): every tensor it makes is on x's device",
    "a causal mask built on the CPU in forward (torch.ones(T, T) without device=x.device), or kept as a plain attribute instead of a registered buffer",
    "Create masks on the input's device (torch.ones(T, T, device=x.device)), or register them with self.register_buffer so that .to(device) moves them.",
)
def device_placement(ctx: Ctx) -> None:
    g = torch.Generator().manual_seed(1)
    present = mapped(ctx)
    args = (torch.randn(2, 5, 8, generator=g), *weights(g, 8, present, torch.float32))
    heads = 2 if multihead(ctx) else 1
    options = ctx.exercise.device_options(args[0])  # a padding mask, where the layer takes one
    if ctx.device == "cuda":
        out = out_of(ctx, args, heads, **options)
        if present:
            bad = mismatch("out", out, ctx.reference(*args, heads=heads, **options)[0], *ctx.tol(torch.float32))
            if bad:
                raise Failed(f"on cuda, for {ctx.exercise.said(args, {'heads': heads, **options})}: {bad}")
        return
    ctx.on_meta(args, {"heads": heads, **options}, ctx.exercise.said(args, {"heads": heads, **options}))


@own(
    "gradients",
    "backward reaches x and every projection weight, with the reference's gradients",
    "a projection built and never used (no gradient reaches it), .detach() or torch.no_grad() in forward, or a mistake that changes the gradients",
    "Compute the output from differentiable torch ops on x and the module's own parameters; every projection must be used.",
)
def gradients(ctx: Ctx) -> None:
    present = needs_weights(ctx)

    def prop(x):
        args, heads = x
        g = torch.randn(args[0].shape, generator=torch.Generator().manual_seed(2), dtype=args[0].dtype)
        got = ctx.grads(*args, heads=heads, grad_out=g)
        leaves = [a.clone().requires_grad_(True) if isinstance(a, torch.Tensor) else None for a in args]
        (ctx.reference(*leaves, heads=heads)[0] * g).sum().backward()
        names = [n for n, a in zip(("x", *ROLES), args) if a is not None]
        found = list(zip(names, got, [a for a in leaves if a is not None]))
        for name, got_, leaf in found[1:] + found[:1]:  # the weights first: a projection backward never reaches
            want = leaf.grad if leaf.grad is not None else torch.zeros_like(leaf)
            bad = ctx.accurate(f"grad of {name}", got_, want, args[0].dtype, scale=10)
            if bad:
                none = " (no gradient reaches it: it is 0 everywhere)" if not got_.any() else ""
                raise Failed(f"for {said(args, heads)}, loss = sum(out * g): {bad.said('the reference gives')}{none}")

    ctx.prove(drawing(ctx, present, t=(1, 5), dtypes=(np.float64,)), prop, max_examples=min(ctx.max_examples, 6))


@own(
    "reference_match",
    "out matches causal multi-head attention with these weights: x @ W.T + b per projection, heads of d_head rows, "
    "softmax(q k^T / sqrt(d_head)) over j <= i, then W_O",
    "any numerical difference: q, k, v taken from the wrong thirds of a fused projection, heads in another order, a wrong scale, a bias dropped",
    "Check each step on a tiny layer (d=4, 2 heads, T=3) by hand: the thirds of c_attn are q, k, v in that order.",
)
def reference_match(ctx: Ctx) -> None:
    present = needs_weights(ctx)

    def prop(x):
        args, heads = x
        out = out_of(ctx, args, heads)
        bad = ctx.accurate("out", out, ctx.reference(*args, heads=heads)[0], args[0].dtype)
        if bad:
            raise Failed(f"for {said(args, heads)}: {bad.said('the reference gives')}")

    ctx.prove(drawing(ctx, present, heads=(1, 4), dtypes=(np.float32, np.float64)), prop)


# the weights the layer may return beside its output: checked where it does (layer_weights)
CHECKS.update(layer_weights.CHECKS)


def heads_option(drawn: tuple) -> tuple:
    args, heads = drawn
    return args, {"heads": heads}


@dataclass(frozen=True)
class MhaModule(Exercise):
    def configured(self, conventions: dict) -> MhaModule:
        """A rubric's names for the constructor's parameters (params = "emb=width, nh=heads") and for the weights'
        parameters (weights = "attn.W=w_qkv, o.weight=w_o"), before the usual names are guessed."""
        build = {"params": PARAMS.read(conventions.get("params", "")),
                 "weights": WEIGHTS.read(conventions.get("weights", ""))}
        return replace(self, build=build)

    def fixed_options(self, *args) -> dict:
        return {"context": CONTEXT, "dropout": DROPOUT}

    def expect(self, *args, **kw) -> list[tuple[int, ...]]:
        return [tuple(args[0].shape)]

    def weight_shapes(self, *args, **kw) -> list[tuple[int, ...]]:
        """[B, H, T, T], or [B, T, T]: one head's, or the heads' mean (nn.MultiheadAttention's default)."""
        b, t, _ = args[0].shape
        return [(b, int(kw.get("heads", 1)), t, t), (b, t, t)]

    def weight_draws(self, ctx: Ctx):
        """The weights checks' inputs, (args, {"heads": H}), with the layer's own weights where they cannot be set."""
        return drawing(ctx, mapped(ctx), t=(2, 5)).map(heads_option)

    def forms(self) -> list[Form]:
        return [LayerForm(1, torch.float32), LayerForm(1, torch.float64), LayerForm(1, torch.float32, long=True)]

    def example(self, form: Form) -> tuple[tuple, dict]:
        g = torch.Generator().manual_seed(12)
        t = LONG if getattr(form, "long", False) else 5
        x = torch.randn(2, t, 8, generator=g).to(form.dtype)
        return (x, *weights(g, 8, ROLES, form.dtype)), {"heads": 2}  # roles the layer lacks are ignored

    def forbidden(self, x, *rest, **kw) -> torch.Tensor:  # type: ignore[override]  # a layer's inputs
        """Where weights the layer returns must be 0: the future of each query (the heatmap hatches it)."""
        return future(x.shape[-2])

    def device_options(self, x: torch.Tensor) -> dict:
        """Keyword inputs beside x for the device check (none: a layer of x alone)."""
        return {}

    def said(self, args: tuple, kw: dict) -> str:
        if not (args and isinstance(args[0], torch.Tensor) and args[0].dim() == 3):
            return "these inputs"
        return said(args, int(kw.get("heads", 1)))

    @property
    def catalogue(self) -> dict:
        return dict(self.checks)  # the shared checks take q, k, v: a layer has its own


EXERCISE = MhaModule(
    "mha_module",
    ("CausalSelfAttention", "MultiHeadAttention", "MultiHeadSelfAttention", "CausalAttention", "MultiheadAttention",
     "MaskedSelfAttention", "SelfAttention", "Attention", "*"),  # "*": the file's one nn.Module class (loader)
    reference,
    checks=CHECKS,
    inputs=("x", *ROLES),
    results=(OUT, OPTIONAL_WEIGHTS),
    lead=(1, 1),
    options={"params": PARAMS, "weights": WEIGHTS},
    forbidden_caption="the future (j > i)",
).configured({})
