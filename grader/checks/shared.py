"""The shared checks, all of them in `SHARED`: checks.shared_weights' (the weights and the mask) and here those of the
function as a whole: the scale, the reference, batch independence, the inputs left as they were, devices and
gradients. Each is beside the misconception it catches and its hint; the exercise gives the inputs (`ctx`).

A check's examples are seeded by its id and the order of its `prove` calls (checks.draws), not by their text."""

from __future__ import annotations

import math

import numpy as np
import torch

from grader.checks import strategies as S
from grader.checks.core import Ctx, Failed
from grader.checks.format import at, fmt, idx, mismatch, shape_of
from grader.checks.shared_weights import SHARED, shared

__all__ = ["SHARED"]


SCALES = {"1/sqrt(H)": lambda t, h, dv: h**-0.5, "no scaling": lambda t, h, dv: 1.0, "1/H": lambda t, h, dv: 1 / h,
          "1/sqrt(T)": lambda t, h, dv: t**-0.5, "1/sqrt(Dv)": lambda t, h, dv: dv**-0.5}
SIZE_USED = {"1/sqrt(Dv)": "v.size(-1), the value size, instead of q.size(-1)"}


def fitted_scale(q, k, w) -> float | None:
    """The c in weights = softmax(c * q @ k^T) that best explains a row of weights (least squares on logs)."""
    s = (q @ k.transpose(-2, -1)).double()
    w = w.double()
    xs, ys = [], []
    rows = w.reshape(-1, *w.shape[-2:])
    ss = s.reshape(-1, *s.shape[-2:])
    for b in range(rows.shape[0]):
        i = rows.shape[-1] - 1  # the last query sees every key
        r, sr = rows[b, i], ss[b, i]
        if (r > 1e-12).all():
            xs.append(sr - sr.mean())
            ys.append(torch.log(r) - torch.log(r).mean())
    if not xs:
        return None
    x, y = torch.cat(xs), torch.cat(ys)
    return float((x @ y) / (x @ x)) if float(x @ x) > 0 else None


@shared(
    "sqrt_scaling",
    "scores are scaled by 1/sqrt(H), H the head size",
    "no scaling, scaling by 1/H, by 1/sqrt(T) (sequence length instead of head size), or by the value size v.size(-1)",
    "Divide q @ k^T by math.sqrt(H) with H = q.size(-1), the head dimension, not the sequence length.",
)
def sqrt_scaling(ctx: Ctx) -> None:
    # Zero-padding the head dim from H to 4H and doubling q leaves q k^T / sqrt(H) unchanged: no reference needed.
    def prop(x):
        q, k, v = x
        w = ctx.weights(q, k, v)
        h = q.shape[-1]
        def pad(t):
            return torch.nn.functional.pad(t, (0, 3 * h))
        w4 = ctx.weights(pad(2 * q), pad(k), pad(v))
        rtol, atol = ctx.tol(w.dtype)
        bad = mismatch("weights", w4, w, rtol, atol)
        if bad:
            raise Failed(f"for {shape_of(q, k, v)}, zero-padding H to {4 * h} and doubling q changed the weights ({bad}){_scale_diagnosis(ctx)}")

    ctx.prove(ctx.qkv(dtypes=(np.float64,), scale=1.0, dv=True), prop)


def _scale_diagnosis(ctx: Ctx) -> str:
    """What the scores look scaled by, in words: a known wrong size, or a constant whatever H is."""
    t, h, dv = 3, 4, 6  # sqrt(T), H, sqrt(H), sqrt(Dv) and 1 all differ
    c = _scale_at(ctx, t, h, dv)
    if c is None:
        return ""
    dv = dv if ctx.value_size() else h
    name, f = min(((n, f) for n, f in SCALES.items() if n != "1/sqrt(Dv)" or dv != h),
                  key=lambda kv: abs(math.log(abs(c) + 1e-30) - math.log(kv[1](t, h, dv))))
    if abs(c / f(t, h, dv) - 1) > 0.05:
        other = _scale_at(ctx, t, 9, dv)  # a fixed size (a model's d_model) gives the same scale at another H
        if other is not None and abs(c / other - 1) < 0.02:
            n = round(c**-2)
            size = f" = 1/sqrt({n})" if n > 0 and abs(n**-0.5 / c - 1) < 0.01 else ""
            return f"; your scores are scaled by {c:.4g}{size} at every H: a fixed size instead of q.size(-1)"
        return f"; your scores look scaled by {fmt(c)} at T={t}, H={h} (expected 1/sqrt(H) = {fmt(h ** -0.5)})"
    if name == "1/sqrt(H)":
        return ""
    sizes = f"T={t}, H={h}" + (f", Dv={dv}" if dv != h else "")
    used = f": scaled by {SIZE_USED[name]}" if name in SIZE_USED else ""
    return f"; at {sizes} your scores look scaled by {fmt(c)}, that is {name}{used} (expected 1/sqrt(H) = {fmt(h ** -0.5)})"


def _scale_at(ctx: Ctx, t: int, h: int, dv: int) -> float | None:
    """The scale that explains the function's weights on fixed inputs of T=t, H=h (v of size dv where the exercise
    and the function take it), in a layout and dtype it handles (float64 where it can)."""
    forms = ctx.forms()
    form = next((f for f in forms if f.dtype == torch.float64), forms[0])
    g = torch.Generator().manual_seed(5)
    shape = ctx.exercise.fit((2,) + (1,) * (form.dims - 1) + (t, h))
    q, k, v = (torch.randn(shape, generator=g, dtype=torch.float64).to(form.dtype) * 0.7 for _ in range(3))
    if ctx.value_size():
        v = torch.randn(shape[:-1] + (dv,), generator=g, dtype=torch.float64).to(form.dtype)
    try:
        w = ctx.weights(q, k, v)
    except Failed:
        return None
    return fitted_scale(q, k, w)


@shared(
    "reference_match",
    "out and weights match the reference implementation",
    "any numerical difference from softmax(q @ k^T / sqrt(H) masked) @ v",
    "Compare your function with the formula step by step on a tiny input (T=2, H=2) printed by hand.",
)
def reference_match(ctx: Ctx) -> None:
    def prop(x):
        q, k, v = x
        out, w = ctx.call(q, k, v)
        ref_out, ref_w = ctx.ref(q, k, v)
        bad = ctx.accurate("weights", w, ref_w, q.dtype) or ctx.accurate("out", out, ref_out, q.dtype)
        if bad:
            raise Failed(f"for {shape_of(q, k, v)}: {bad.said('the reference gives')}")

    ctx.prove(ctx.qkv(t=(1, 12), lead=(1, 2), dtypes=(np.float32, np.float64), dv=True), prop)


@shared(
    "batch_independence",
    "each batch element's result depends only on that element",
    "reductions (max, sum, mean) over the whole tensor instead of per row, or reading another element (k[0], k[:1])",
    "Reduce only over the key axis (dim=-1, keepdim=True), never over dim 0 or the whole tensor; keep every batch element's own q, k and v.",
)
def batch_independence(ctx: Ctx) -> None:
    # Both directions: each element on its own (B=1) must give what it gets within the batch, so code whose every
    # element reads element 0's keys fails as well as code whose element 0 reads the others.
    def prop(x):
        q, k, v = x
        out, w = ctx.call(q, k, v)
        rtol, atol = ctx.tol(w.dtype)
        for b in range(q.shape[0]):
            def alone(t, b=b):
                return t[b : b + 1]
            out1, w1 = ctx.call(alone(q), alone(k), alone(v))
            bad = mismatch("weights", w1, alone(w), rtol, atol) or mismatch("out", out1, alone(out), rtol, atol)
            if bad:
                raise Failed(f"for {shape_of(q, k, v)}, batch element {b} on its own (B=1) gives "
                    f"{_within_batch(bad, b, q.shape[0])}: its result depends on the other batch elements")

    ctx.prove(ctx.qkv(b=(2, 3)), prop)


def _within_batch(bad, b: int, n: int) -> str:
    """A mismatch of element b alone (its index starts with 0), said of element b within a batch of n."""
    return bad.in_element(b).said(f"within the batch of {n}:")


@shared(
    "inputs_unchanged",
    "q, k and v are not modified in place",
    "modifying the inputs in place (q /= sqrt(H), q.mul_(...), masked_fill_ on a view of k)",
    "Use out-of-place operations (q = q / math.sqrt(H)); the caller still needs q, k and v.",
)
def inputs_unchanged(ctx: Ctx) -> None:
    def prop(x):
        q, k, v = x
        n = len(ctx.exercise.labels())  # the result's tensors, then the inputs (an option's tensors after q, k, v)
        q2, k2, v2 = ctx.call_inputs(q, k, v)[n : n + 3]
        for name, a, b in (("q", q, q2), ("k", k, k2), ("v", v, v2)):
            bad = ~((a == b) | (a.isnan() & b.isnan()))
            if bad.any():
                i = idx(a, bad)
                raise Failed(f"for {shape_of(q, k, v)}: your function changed {at(name, i)} from {fmt(float(a[i]))} to {fmt(float(b[i]))}")

    ctx.prove(ctx.qkv(), prop, max_examples=min(ctx.max_examples, 10))


@shared(
    "device_placement",
    "works when q, k, v live on another device (GPU): every tensor it makes is on q's device",
    "a mask built on the CPU (torch.ones(T, T) without device=q.device), or cached from a call on another device",
    "Create masks and constants on the inputs' device: torch.ones(T, T, dtype=torch.bool, device=q.device).",
)
def device_placement(ctx: Ctx) -> None:
    dims = {f.dims for f in ctx.forms()}
    shapes = [s for s in [(2, 3, 4), (2, 2, 5, 3)] if len(ctx.exercise.fit(s)) - 2 in dims or not dims]
    g = torch.Generator().manual_seed(1)
    cases = [case for s in shapes for case in ctx.exercise.device_cases(torch.randn(ctx.exercise.fit(s), generator=g))]
    for args, kw in cases:
        q, k, v = args[:3]
        said = shape_of(q, k, v, **kw)
        if ctx.device == "cuda":  # real data crosses back, so compare it
            rtol, atol = ctx.tol(q.dtype)
            out, w = ctx.call(*args, **kw)
            ref_out, ref_w = ctx.ref(*args, **kw)
            bad = mismatch("out", out, ref_out, rtol, atol) or mismatch("weights", w, ref_w, rtol, atol)
            if bad:
                raise Failed(f"on cuda, for {said}: {bad}")
            continue
        ctx.on_meta(args, kw, said)


@shared(
    "gradients",
    "backward runs and the gradients of q, k, v are finite and match the reference's",
    "breaking autograd (.detach(), .data, numpy round trips, torch.no_grad) or a non-differentiable trick",
    "Build the result from differentiable torch ops on q, k, v; avoid .detach(), .data, .numpy() and torch.no_grad().",
)
def gradients(ctx: Ctx) -> None:
    def prop(x):
        (q, k, v), g = x
        gq, gk, gv = ctx.grads(q, k, v, grad_out=g)
        qq, kk, vv = (t.clone().requires_grad_(True) for t in (q, k, v))
        out, _ = ctx.ref(qq, kk, vv)
        (out * g).sum().backward()  # the same grads; autograd.backward(out, g) imports sympy to check shapes
        for name, got, want in (("q", gq, qq.grad), ("k", gk, kk.grad), ("v", gv, vv.grad)):
            bad = ctx.accurate(f"grad of {name}", got, want, q.dtype, scale=10)
            if bad:
                raise Failed(f"for {shape_of(q, k, v)}, loss = sum(out * g): {bad.said('the reference gives')}")

    ctx.prove(S.with_grad(ctx.qkv(dtypes=(np.float64,), scale=2.0, dv=True)), prop, max_examples=min(ctx.max_examples, 10))


