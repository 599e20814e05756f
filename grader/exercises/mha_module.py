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
from grader.checks.format import mismatch
from grader.checks.reach import Form
from grader.exercises.base import OUT, Exercise
from grader.exercises.layer_scales import scale_named
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
    grown,
    mapped,
    multihead,
    needs_weights,
    out_of,
    replaced,
    role,
    said,
    two_heads,
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
    if ctx.device == "cuda":
        out = out_of(ctx, args, heads)
        if present:
            bad = mismatch("out", out, ctx.reference(*args, heads=heads)[0], *ctx.tol(torch.float32))
            if bad:
                raise Failed(f"on cuda, for {said(args, heads)}: {bad}")
        return
    ctx.on_meta(args, {"heads": heads}, said(args, heads))


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

    def forms(self) -> list[Form]:
        return [LayerForm(1, torch.float32), LayerForm(1, torch.float64), LayerForm(1, torch.float32, long=True)]

    def example(self, form: Form) -> tuple[tuple, dict]:
        g = torch.Generator().manual_seed(12)
        t = LONG if getattr(form, "long", False) else 5
        x = torch.randn(2, t, 8, generator=g).to(form.dtype)
        return (x, *weights(g, 8, ROLES, form.dtype)), {"heads": 2}  # roles the layer lacks are ignored

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
    results=(OUT,),
    lead=(1, 1),
    options={"params": PARAMS, "weights": WEIGHTS},
    forbidden_caption="the future (j > i)",
).configured({})
