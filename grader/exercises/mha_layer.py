"""Causal multi-head self-attention with given weights, as Stanford CS336 assignment 1's adapter asks for it:
`run_multihead_self_attention(d_model, num_heads, q_proj_weight, k_proj_weight, v_proj_weight, o_proj_weight,
in_features)` (also `multihead_self_attention`), weights [d_model, d_model] applied as `x @ W.T`, in_features
[..., T, d_model] with any batch dims, the output [..., T, d_model] alone returned (issue 32, part 1).

The shared checks take q, k, v; a layer takes x and weights, so it has checks of its own: causality and batch
independence over the input's tokens, the weights' orientation, the output projection, the heads' order, the scale
by the head size, devices, gradients and the reference. The drawn weights have unit-variance projections; sizes
and a seed are drawn (hypothesis shrinks those, not thousands of weights).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
import torch

from grader.checks.core import Ctx, Failed, check
from grader.checks.format import fmt, mismatch
from grader.checks.reach import Form
from grader.exercises import layer_projections as projections, layer_weights
from grader.exercises.base import OPTIONAL_WEIGHTS, OUT, Exercise
from grader.exercises.layer_inputs import (
    INPUTS,
    WK,
    WQ,
    LayerForm,
    X,
    drawing,
    made,
    moved,
    out_of,
    replaced,
    said,
    token,
    with_token,
)

CHECKS: dict = {}
own = partial(check, CHECKS)


def reference():
    from grader.reference.mha_layer import multihead_self_attention

    return multihead_self_attention


# -- the checks ---------------------------------------------------------------------------------------------------
@own(
    "output_shape",
    "out is [..., T, d_model] in in_features' dtype, for [B, T, d_model], [T, d_model] and more batch dims, float32 and float64",
    "reshapes written for [B, T, d_model] only (B, T, _ = x.shape), or a module of float32 weights that float64 inputs meet",
    "Write it for any batch dims: *lead, T, _ = in_features.shape, reshape(*lead, T, heads, d_head), transpose(-3, -2) "
    "(or einops with '...'), and keep the input's dtype.",
)
def output_shape(ctx: Ctx) -> None:
    ctx.charge_reach(explain)

    def prop(args):
        out = out_of(ctx, args)
        if out.dtype != args[X].dtype:
            raise Failed(f"for {said(args)}: out has dtype {str(out.dtype).removeprefix('torch.')}, expected "
                         f"{str(args[X].dtype).removeprefix('torch.')}")

    ctx.prove(drawing(ctx, lead=(0, 2), dtypes=(np.float32, np.float64)), prop, max_examples=min(ctx.max_examples, 8))


def explain(reach) -> str:
    if reach.leading:
        return reach.leading
    first = next(iter(reach.fails.values()))
    if reach.none:
        return f"your function handles none of the inputs tried ({named(reach.fails)}):\n{first}"
    cause = ""
    if all(f.dtype == torch.float64 for f in reach.fails):
        cause = ("\nIt works in float32 only: make what it builds (a module's weights, a mask) in the input's dtype, "
                 "or use the given weights as they are.")
    elif all(f.dtype == torch.float32 for f in reach.fails):
        cause = ("\nIt takes some numbers of batch dims only: CS336's in_features is [..., T, d_model]; write the "
                 "reshapes with *lead (or einops' '...').")
    return (f"your function does not handle {named(reach.fails)} inputs; the other checks ran on those it handles "
            f"({named(reach.works)}).\n{first}{cause}")


def named(forms) -> str:
    return ", ".join(f.words() for f in forms)


@own(
    "content_dependent",
    "each output mixes the earlier tokens by attention: it changes with an earlier token, and with W_Q and W_K",
    "a function that returns zeros, the values alone (x @ W_V.T @ W_O.T), or mixes tokens by a rule that ignores the queries and keys",
    "out[..., i, :] = W_O concat_h softmax(q_i k_j^T / sqrt(d_head) for j <= i) v_j: compute the scores from the "
    "queries and keys and use them.",
)
def content_dependent(ctx: Ctx) -> None:
    def prop(args):
        out = out_of(ctx, args)
        if not torch.isfinite(out).all():
            raise Failed(f"for {said(args)} with ordinary values, out holds NaN or inf")
        x = args[X]
        last = x.shape[-2] - 1
        x2 = x.clone()
        x2[(0,) * (x.dim() - 2) + (0,)] = moved(x2[(0,) * (x.dim() - 2) + (0,)])
        first = (0,) * (x.dim() - 2) + (last,)
        if torch.equal(out_of(ctx, replaced(args, {X: x2}))[first], out[first]):
            raise Failed(f"for {said(args)}, changing x[{token(x, 0)}] left out[{token(x, last)}] unchanged: each "
                         "output reads its own token only, not the earlier ones by attention")
        for i, name, what in ((WQ, "W_Q", "queries"), (WK, "W_K", "keys")):
            if torch.equal(out_of(ctx, replaced(args, {i: moved(args[i])})), out):
                raise Failed(f"for {said(args)}, changing {name} left out unchanged: the attention weights ignore "
                             f"the {what}")

    ctx.prove(drawing(ctx, t=(2, 5)), prop, max_examples=min(ctx.max_examples, 8))


@own(
    "future_invariance",
    "changing token j of in_features never changes an output at a position i < j (causality over the input)",
    "no causal mask, the wrong triangle, or heads split so that tokens mix (reshape(..., heads, T, d_head) without "
    "going through [..., T, heads, d_head] and a transpose)",
    "Mask the scores where j > i with -inf before the softmax over the keys, and split the heads with "
    "reshape(*lead, T, heads, d_head).transpose(-3, -2).",
)
def future_invariance(ctx: Ctx) -> None:
    def prop(x):
        args, j = x
        out = out_of(ctx, args)
        xs = args[X].clone()
        at = (0,) * (xs.dim() - 2)
        xs[at + (j,)] = moved(xs[at + (j,)])
        out2 = out_of(ctx, replaced(args, {X: xs}))
        bad = mismatch("out", out2[at + (slice(0, j),)], out[at + (slice(0, j),)], *ctx.tol(out.dtype))
        if bad:
            i = bad.index[0] if bad.index else 0
            raise Failed(f"for {said(args)}: changing x[{token(xs, j)}] changed out[{token(xs, i)}] "
                         f"({bad.said('before it was')}): position {i} sees token {j}, which is in its future")

    ctx.prove(with_token(drawing(ctx, t=(2, 6))), prop)


@own(
    "batch_independence",
    "each sequence's output depends only on that sequence",
    "the batch flattened into one long sequence (x.reshape(-1, d_model) attended over as a whole), or a reshape that mixes the batch dim",
    "Keep the batch dims apart: project with in_features @ W.T, which keeps them, and attend over the last two dims only.",
)
def batch_independence(ctx: Ctx) -> None:
    def prop(args):
        out = out_of(ctx, args)
        x = args[X]
        for b in range(x.shape[0]):
            alone = out_of(ctx, replaced(args, {X: x[b : b + 1]}))
            bad = mismatch("out", alone, out[b : b + 1], *ctx.tol(out.dtype))
            if bad:
                raise Failed(f"for {said(args)}, sequence {b} on its own (B=1) gives "
                             f"{bad.in_element(b).said(f'within the batch of {x.shape[0]}:')}: its output depends on "
                             "the other sequences")

    ctx.prove(drawing(ctx, lead=(1, 2), b=(2, 3), t=(1, 5)), prop, max_examples=min(ctx.max_examples, 8))


# the checks that change the weights (their orientation, W_O once, the heads' order, the scale), in this place of the
# catalogue
CHECKS.update(projections.CHECKS)


@own(
    "device_placement",
    "works when in_features and the weights live on another device (GPU): every tensor it makes is on the input's device",
    "a causal mask built on the CPU (torch.ones(T, T) without device=), or a module built on the CPU and never moved to the weights' device",
    "Create masks on the input's device (torch.ones(T, T, dtype=torch.bool, device=in_features.device)), and build "
    "any module with device=in_features.device.",
)
def device_placement(ctx: Ctx) -> None:
    forms = ctx.forms()
    form = forms[0]
    batch = (2,) + (1,) * (form.dims - 1) if form.dims else ()
    args = made(torch.Generator().manual_seed(1), batch, 5, 2, 4, form.dtype)
    if ctx.device == "cuda":  # real data crosses back, so compare it
        bad = mismatch("out", out_of(ctx, args), ctx.reference(*args)[0], *ctx.tol(form.dtype))
        if bad:
            raise Failed(f"on cuda, for {said(args)}: {bad}")
        return
    ctx.on_meta(args, {}, said(args))


@own(
    "inputs_unchanged",
    "in_features and the weights are not modified in place",
    "an in-place operation on an input (q_proj_weight /= math.sqrt(d_head), in_features.mul_(...)), which changes the caller's tensor",
    "Use out-of-place operations (w = q_proj_weight / math.sqrt(d_head)); the caller still needs its weights.",
)
def inputs_unchanged(ctx: Ctx) -> None:
    def prop(args):
        left = ctx.call_inputs(*args)[1:]
        for name, a, b in zip(INPUTS[2:], args[2:], left):
            if not torch.equal(a, b):
                i = tuple(int(j) for j in torch.nonzero(a != b)[0])
                raise Failed(f"for {said(args)}: your function changed {name}[{', '.join(map(str, i))}] from "
                             f"{fmt(float(a[i]))} to {fmt(float(b[i]))}")

    ctx.prove(drawing(ctx, t=(1, 5)), prop, max_examples=min(ctx.max_examples, 6))


@own(
    "reference_match",
    "out matches causal multi-head attention with these weights: x @ W.T per projection, heads of d_head rows, "
    "softmax(q k^T / sqrt(d_head)) over j <= i, heads concatenated in order, then @ W_O.T",
    "any numerical difference from the formula: a wrong scale, heads in another order, a weight transposed, the mask wrong",
    "Check each step on a tiny input (d_model=4, 2 heads, T=3) by hand, against the formula in the handout.",
)
def reference_match(ctx: Ctx) -> None:
    def prop(args):
        bad = ctx.accurate("out", out_of(ctx, args), ctx.reference(*args)[0], args[X].dtype)
        if bad:
            raise Failed(f"for {said(args)}: {bad.said('the reference gives')}")

    ctx.prove(drawing(ctx, heads=(1, 4), t=(1, 8), dtypes=(np.float32, np.float64)), prop)


GRADS_NOTE = ("no gradient reaches the weights you were given: your function copies them into a module "
              "(load_state_dict, weight.data = ...) or detaches them, so backward reaches the module's own "
              "parameters, which is what CS336's adapters do; the gradients were not compared (not graded)")


@own(
    "gradients",
    "backward through out reaches in_features and the weights with the reference's gradients",
    "attention weights detached (.detach(), torch.no_grad(), a numpy round trip) so that the gradient through the scores is lost",
    "Compute the output from differentiable torch ops; never detach the scores or the softmax.",
)
def gradients(ctx: Ctx) -> None:
    def prop(args):
        g = torch.randn(args[X].shape, generator=torch.Generator().manual_seed(2), dtype=args[X].dtype)
        try:
            got = ctx.grads(*args, grad_out=g)
        except Failed as e:
            # every weight unreached but not the input: a module took copies of the weights
            unreached = e.error.unreached if e.error is not None else frozenset()
            if set(INPUTS[2:6]) <= unreached and INPUTS[X] not in unreached:
                if GRADS_NOTE not in ctx.notes:
                    ctx.notes.append(GRADS_NOTE)
                return
            raise
        leaves = [a.clone().requires_grad_(True) if isinstance(a, torch.Tensor) else a for a in args]
        (ctx.reference(*leaves)[0] * g).sum().backward()
        for name, got_, leaf in zip(INPUTS[2:], got, leaves[2:]):
            bad = ctx.accurate(f"grad of {name}", got_, leaf.grad, args[X].dtype, scale=10)
            if bad:
                raise Failed(f"for {said(args)}, loss = sum(out * g): {bad.said('the reference gives')}")

    ctx.prove(drawing(ctx, t=(1, 5), dtypes=(np.float64,)), prop, max_examples=min(ctx.max_examples, 6))


# the weights the layer may return beside its output: checked where it does (layer_weights)
CHECKS.update(layer_weights.CHECKS)


def no_options(args) -> tuple:
    return args, {}


@dataclass(frozen=True)
class MhaLayer(Exercise):
    step: int = 1  # the drawn head sizes are multiples of it

    def expect(self, *args, **kw) -> list[tuple[int, ...]]:
        return [tuple(args[X].shape)]

    def weight_shapes(self, *args, **kw) -> list[tuple[int, ...]]:
        """[..., H, T, T], or [..., T, T]: one head's, or the heads' mean."""
        *lead, t, _ = args[X].shape
        return [(*lead, args[1], t, t), (*lead, t, t)]

    def weight_draws(self, ctx: Ctx):
        """The weights checks' inputs, (args, kw), within the function's reach."""
        return drawing(ctx, t=(2, 5)).map(no_options)

    def forms(self) -> list[Form]:
        """The contract first ([B, T, d_model] float32, CS336's tests), then float64, no batch dim, two batch dims."""
        return [LayerForm(1, torch.float32), LayerForm(1, torch.float64), LayerForm(0, torch.float32),
                LayerForm(2, torch.float32)]

    def example(self, form: Form) -> tuple[tuple, dict]:
        """B=2, S=3, T=5, 2 heads of size 3: every size differs, so a size taken from the wrong dim shows."""
        batch = (2, 3)[: form.dims]
        return made(torch.Generator().manual_seed(12), batch, 5, 2, 3, form.dtype), {}

    def unturned(self, x: torch.Tensor, wider: int = 1) -> dict:
        """Keywords under which a variant's positions leave the scores as they are (RoPE: every position 0), for
        sqrt_scaling; `wider`: for heads padded to that many times their size."""
        return {}

    def said(self, args: tuple, kw: dict) -> str:
        ok = len(args) == len(INPUTS) and isinstance(args[X], torch.Tensor) and isinstance(args[0], int)
        return said(args) if ok else "these inputs"

    @property
    def catalogue(self) -> dict:
        return dict(self.checks)  # the shared checks take q, k, v: a layer has its own


EXERCISE = MhaLayer(
    "mha_layer",
    ("run_multihead_self_attention", "multihead_self_attention"),
    reference,
    checks=CHECKS,
    inputs=INPUTS,
    results=(OUT, OPTIONAL_WEIGHTS),
    lead=(0, 2),
    heads=(1, 3),
)
