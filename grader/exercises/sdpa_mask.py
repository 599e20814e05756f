"""Attention with a mask argument, as Stanford CS336 assignment 1 asks for it: `scaled_dot_product_attention(Q, K, V,
mask=None)` (also `run_scaled_dot_product_attention`, the adapter's name) with Q, K [..., queries, d_k] and V
[..., keys, d_v] (any number of batch-like dims, d_v free), a mask broadcastable to [..., queries, keys], and only
the output [..., queries, d_v] returned; the checks read the weights from the output (V the identity over keys).

The mask's meaning is the rubric's `[conventions] mask`: "attend" (bool, True may attend: CS336, torch's SDPA),
"masked" (bool, True is hidden: nn.MultiheadAttention's key_padding_mask), "additive" (float 0 / -inf added to the
scores) or "int" (1 attend / 0 hidden: the Annotated Transformer). What a query that may attend to no key must give is
`[conventions] fully_masked`: "zeros", any "finite" value, or "unspecified" (left out of every comparison). The
shared checks pass a causal mask; the own checks draw any pattern, Tq != Tk, broadcast masks and no mask.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import cast

import numpy as np
import torch
from hypothesis import strategies as st

from grader.checks import strategies as S
from grader.checks.core import Ctx, Failed, check
from grader.checks.format import at, fmt, idx, mismatch, shape_of
from grader.exercises.base import OPTIONAL_WEIGHTS, OUT, Exercise, Variants
from grader.exercises.mistakes import common, drawn, large, negative

CHECKS: dict = {}
own = partial(check, CHECKS)

MASKS = ("attend", "masked", "additive", "int")
FULLY_MASKED = ("zeros", "finite", "unspecified")
WEIGHTS_RETURNED = ("never", "optional")  # whether (out, weights) is the output alone's equal, or charged to output_shape


def reference():
    from grader.reference.sdpa_mask import scaled_dot_product_attention

    return scaled_dot_product_attention


# -- drawing: Q, K, V with their own lengths, and masks of any pattern and shape ----------------------------------
@st.composite
def cross(draw, lead=(1, 3), tq=(1, 5), tk=(1, 5), d=(1, 5), dv=(1, 5), dtypes=(np.float32,), square: bool = False,
          scale: float = 3.0):
    """(Q, K, V) with Tq and Tk drawn apart (unless `square`) and V of its own size, batch-like dims from `lead`."""
    dtype = draw(st.sampled_from(dtypes))
    batch = tuple(draw(st.integers(1, 2)) for _ in range(draw(st.integers(*lead))))
    q_len, dk = draw(st.integers(*tq)), draw(st.integers(*d))
    k_len = q_len if square else draw(st.integers(*tk))
    shapes = (batch + (q_len, dk), batch + (k_len, dk), batch + (k_len, draw(st.integers(*dv)) if dv else dk))
    return tuple(torch.from_numpy(draw(S.arrays(dtype, s, elements=S._floats(dtype, scale)))) for s in shapes)


def drawing(ctx: Ctx, lead=(1, 3), dtypes=(np.float32,), **kw):
    """cross() within what the function handles (its reach): the batch-like dims, dtypes and V's own size."""
    lead = ctx.exercise.leads(*lead)
    if ctx.reach is not None:
        lead, dtypes = ctx.reach.dims(*lead), ctx.reach.dtypes(dtypes)
    return cross(lead=lead, dtypes=dtypes, dv=(1, 5) if ctx.value_size() else None, **kw)


@st.composite
def with_mask(draw, inputs, every_row: bool = True, shape: str = "full"):
    """(Q, K, V) and an `allowed` pattern [..., Tq, Tk]: "full" of the scores' shape, "shared" [Tq, Tk], or
    "broadcast" (some batch-like dims of size 1). every_row: each query may attend to at least one key."""
    q, k, v = draw(inputs)
    batch, tq, tk = q.shape[:-2], q.shape[-2], k.shape[-2]
    dims = {"full": batch, "shared": (), "broadcast": tuple(draw(st.sampled_from([1, n])) for n in batch)}[shape]
    allowed = torch.from_numpy(draw(S.arrays(np.bool_, dims + (tq, tk), elements=None)))
    if every_row:
        allowed[..., torch.arange(tq), torch.arange(tq) % tk] = True
    return (q, k, v), allowed


def rows_with_keys(allowed: torch.Tensor, scores_shape) -> torch.Tensor:
    """[..., Tq, 1]: the queries that may attend to some key."""
    return allowed.expand(scores_shape).any(-1, keepdim=True)


# -- the checks ---------------------------------------------------------------------------------------------------
@own(
    "mask_respected",
    "for any mask pattern (not only causal), Tq != Tk, batch-like dims and a V of its own size, a key the mask hides gets weight exactly 0",
    "the mask read the other way round (True as hidden), ignored, transposed ([keys, queries]), or filled with a finite value such as 0",
    "Hide the keys the mask forbids before the softmax: scores.masked_fill(~mask, float('-inf')) for a bool mask where True may attend.",
)
def mask_respected(ctx: Ctx) -> None:
    def prop(x):
        (q, k, v), allowed = x
        mask = ctx.exercise.encode(allowed, q.dtype)
        w = ctx.weights(q, k, v, mask=mask)
        leak = ~allowed.expand(w.shape) & (w != 0) & rows_with_keys(allowed, w.shape)
        if leak.any():
            i = idx(w, leak)
            raise Failed(f"for {shape_of(q, k, v)} and the mask {_shown(mask)}: {at('weights', i)} = {fmt(float(w[i]))}, "
                         f"expected 0 (the mask hides key {i[-1]} from query {i[-2]})")

    ctx.prove(with_mask(drawing(ctx)), prop)


@own(
    "mask_pattern_match",
    "for any mask pattern and Tq != Tk, each query's output is what it gets from its allowed keys alone",
    "hidden keys that still count (a finite fill, a mask applied after the softmax), or a function right only for square, causal masks",
    "Mask before the softmax with -inf, for any shapes: scores = Q @ K.transpose(-2, -1) / sqrt(d_k), masked_fill(~mask, -inf), softmax(dim=-1), then @ V.",
)
def mask_pattern_match(ctx: Ctx) -> None:
    # compared with the function itself (its keys cut to the allowed ones), never the reference: a slip it makes
    # everywhere, a scale say, costs the checks of that slip only
    def prop(x):
        (q, k, v), allowed = x
        mask = ctx.exercise.encode(allowed, q.dtype)
        out = ctx.call_all(q, k, v, mask=mask)[0]
        full = allowed.expand(q.shape[:-1] + k.shape[-2:-1])
        rtol, atol = ctx.tol(q.dtype)
        for at_ in [tuple(int(j) for j in i) for i in torch.nonzero(full.any(-1))][:4]:  # a few: each costs a call
            *b, i = at_
            keys = full[(*b, i)]
            lead = tuple(slice(j, j + 1) for j in b)  # the batch-like dims kept, of size 1: the layout it handles
            one = ctx.exercise.encode(torch.ones(*(1,) * len(b), 1, int(keys.sum()), dtype=torch.bool), q.dtype)
            alone = ctx.call_all(q[(*lead, slice(i, i + 1))], k[lead][..., keys, :], v[lead][..., keys, :], mask=one)[0]
            bad = mismatch("out", out[(*lead, slice(i, i + 1))], alone, rtol, atol)
            if bad:
                raise Failed(f"for {shape_of(q, k, v)} and the mask {_shown(mask)}: query {i} of batch element "
                             f"{tuple(b)} gives {bad.said(f'while its {int(keys.sum())} allowed keys alone give')}")

    ctx.prove(with_mask(drawing(ctx, dtypes=(np.float32, np.float64))), prop)


@own(
    "mask_broadcast",
    "a mask shared by the batch ([Tq, Tk]), or with batch-like dims of size 1, gives what the same mask at the scores' full shape gives",
    "the mask indexed per batch element (mask[b]) or used with boolean indexing, which assumes it has the scores' full shape",
    "Let broadcasting do it: scores.masked_fill(~mask, -inf) takes any mask broadcastable to [..., Tq, Tk].",
)
def mask_broadcast(ctx: Ctx) -> None:
    def prop(x):
        (q, k, v), allowed = x
        small = ctx.exercise.encode(allowed, q.dtype)
        full = ctx.exercise.encode(allowed.expand(q.shape[:-1] + k.shape[-2:-1]).contiguous(), q.dtype)
        want = ctx.call_all(q, k, v, mask=full)[0]
        got = ctx.call_all(q, k, v, mask=small)[0]
        bad = mismatch("out", got, want, *ctx.tol(q.dtype))
        if bad:
            raise Failed(f"for {shape_of(q, k, v)}, the mask of shape {tuple(small.shape)} {_shown(small)} gives "
                         f"{bad.said('while the same mask at the full shape gives')}")

    ctx.prove(st.one_of(with_mask(drawing(ctx, square=True), shape="shared"),
                        with_mask(drawing(ctx, lead=(2, 3), square=True), shape="broadcast")), prop)


@own(
    "no_mask",
    "mask=None (the default) is attention over every key: every weight above 0, each row summing to 1",
    "a function that needs a mask (torch.where(mask, ...) with mask None), or one that masks something anyway",
    "Apply the mask only `if mask is not None:`; without one every key is visible.",
)
def no_mask(ctx: Ctx) -> None:
    def prop(x):
        q, k, v = x
        w = ctx.weights(q, k, v, mask=None)
        rtol, atol = ctx.tol(q.dtype)
        hidden = ~(w > 0)
        if hidden.any():
            i = idx(w, hidden)
            raise Failed(f"for {shape_of(q, k, v)} with mask=None: {at('weights', i)} = {fmt(float(w[i]))}, expected "
                         "above 0: without a mask every key is visible")
        bad = mismatch("row sums", w.sum(-1), torch.ones_like(w.sum(-1)), rtol, atol)
        if bad:
            raise Failed(f"for {shape_of(q, k, v)} with mask=None: {bad}")

    ctx.prove(drawing(ctx, scale=1.0), prop, max_examples=min(ctx.max_examples, 8))


@own(
    "fully_masked_rows",
    "a query the mask lets attend to no key gives what the rubric asks for it (zeros, or any finite value), never NaN",
    "softmax over a row whose every score is -inf is 0/0 = NaN, and NaN spreads into the loss; a finite fill (-1e9) instead averages the values",
    "After the softmax, zero the rows that may attend to no key: torch.where(mask.any(-1, keepdim=True), weights, 0.0) (or weights.nan_to_num(0.0)).",
)
def fully_masked_rows(ctx: Ctx) -> None:
    want = cast(SdpaMask, ctx.exercise).fully_masked
    if want == "unspecified":
        return  # the rubric leaves those rows free

    def prop(x):
        (q, k, v), allowed = x
        allowed[..., 0, :] = False  # query 0 may attend to nothing
        mask = ctx.exercise.encode(allowed, q.dtype)
        out = ctx.call_all(q, k, v, mask=mask)[0]
        empty = ~rows_with_keys(allowed, q.shape[:-1] + k.shape[-2:-1])
        bad = (~torch.isfinite(out) | ((out != 0) if want == "zeros" else False)) & empty
        if bad.any():
            i = idx(out, bad)
            what = "NaN" if out[i].isnan() else fmt(float(out[i]))
            raise Failed(f"for {shape_of(q, k, v)} and the mask {_shown(mask)}: {at('out', i)} is {what} where query {i[-2]} "
                         f"may attend to no key; expected {'0' if want == 'zeros' else 'a finite value'}")

    ctx.prove(with_mask(drawing(ctx, tq=(1, 4), square=True)), prop, max_examples=min(ctx.max_examples, 8))


@own(
    "mask_unchanged",
    "the caller's mask is not modified in place",
    "an in-place operation on the mask (mask.logical_not_(), mask.masked_fill_(...)) that changes the caller's tensor",
    "Build a new tensor: ~mask or mask.logical_not(), never the in-place forms.",
)
def mask_unchanged(ctx: Ctx) -> None:
    def prop(x):
        (q, k, v), allowed = x
        mask = ctx.exercise.encode(allowed, q.dtype)
        *_, q2, k2, v2, m2 = ctx.call_inputs(q, k, v, mask=mask)
        if not torch.equal(m2, mask):
            i = idx(mask, m2 != mask)
            raise Failed(f"for {shape_of(q, k, v)}: your function changed {at('mask', i)} from {mask[i].item()} to {m2[i].item()}")

    ctx.prove(with_mask(drawing(ctx, square=True)), prop, max_examples=min(ctx.max_examples, 6))


def _shown(mask: torch.Tensor) -> str:
    return str(mask.tolist()) if mask.numel() <= 16 else f"of shape {tuple(mask.shape)}"


# -- planted bugs, for diagnosis ------------------------------------------------------------------------------------
MISTAKES = {
    "mask inverted": "the mask is read the other way round: keys it marks as visible are hidden and hidden ones visible",
    "mask ignored": "the mask is never applied: every query sees every key",
    **common("no scaling", "zero fill", "mask after softmax", "softmax over queries", "exp without max", "batch mixed",
             head="d_k"),
}
GROUPS = [("mask inverted", "mask ignored"), ("no scaling",), ("zero fill", "mask after softmax"),
          ("softmax over queries", "batch mixed"), ("exp without max",)]


def plant(exercise, q, k, v, mask=None, bugs: frozenset = frozenset()):
    """The reference with `bugs` planted, the mask read in `exercise`'s convention: (out, weights)."""
    from grader.reference.planted import attend

    allowed = exercise.decode(mask) if mask is not None else torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool)
    if "mask inverted" in bugs:
        allowed = ~allowed
    return attend(q, k, v, allowed, bugs | ({"no mask"} if "mask ignored" in bugs else set()))


def probes(exercise) -> list[tuple[tuple, dict]]:
    """T=4 queries on 5 keys, d_k=3, a random mask with a key for every query, every score negative, scores past
    exp's float32 range."""
    q, k, v = drawn(2027, (2, 4, 3), (2, 5, 3))
    allowed = torch.rand(4, 5, generator=torch.Generator().manual_seed(8)) > 0.5
    allowed[torch.arange(4), torch.arange(4)] = True
    mask = exercise.encode(allowed, q.dtype)
    return [((q, k, v), {"mask": mask}), (negative(q, k, v), {"mask": mask}), (large(q, k, v), {"mask": mask})]


# -- the exercise -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SdpaMask(Exercise):
    mask: str = "attend"
    fully_masked: str = "zeros"
    weights_returned: str = "never"  # "optional": (out, weights) costs nothing (the Annotated Transformer's attention)

    def configured(self, conventions: dict) -> SdpaMask:
        """The rubric's conventions; `weights_returned = "optional"` lets the result be (out, weights), whose weights
        are not graded: the checks read them from the output, as from a function that returns it alone."""
        found = replace(self, **conventions) if conventions else self
        results = (OUT, OPTIONAL_WEIGHTS) if found.weights_returned == "optional" else (OUT,)
        return replace(found, results=results,
                       variants=Variants(MISTAKES, GROUPS, (), partial(plant, found), partial(probes, found)))

    def encode(self, allowed: torch.Tensor, dtype) -> torch.Tensor:
        """A bool pattern (True may attend) as the rubric's convention writes it."""
        if self.mask == "masked":
            return ~allowed
        if self.mask == "additive":
            return torch.zeros(allowed.shape, dtype=dtype).masked_fill(~allowed, float("-inf"))
        if self.mask == "int":
            return allowed.to(torch.int64)
        return allowed

    def decode(self, mask: torch.Tensor) -> torch.Tensor:
        if self.mask == "masked":
            return ~mask.bool()
        if self.mask == "additive":
            return mask == 0
        return mask.bool() if self.mask == "attend" else mask != 0

    def call_reference(self, q, k, v, mask=None, **kw) -> tuple:
        from grader.reference.sdpa_mask import weights

        w = weights(q, k, None if mask is None else self.decode(mask))
        return w @ v, w

    def fixed_options(self, q, *rest) -> dict:
        """A causal mask at the scores' full shape (the contract's), in the rubric's convention: the shared checks'
        future is the keys it hides; a mask that broadcasts is mask_broadcast's."""
        t = q.shape[-2]
        return {"mask": self.encode(torch.ones(t, t, dtype=torch.bool).tril().expand(*q.shape[:-2], t, t).contiguous(), q.dtype)}

    def open_options(self) -> dict:
        return {"mask": None}

    def forbidden(self, q, k, v, mask=None, **kw) -> torch.Tensor:  # type: ignore[override]  # its own options
        t = k.shape[-2]
        return ~self.decode(mask) if mask is not None else torch.zeros(q.shape[-2], t, dtype=torch.bool)

    def why_forbidden(self, i: int, j: int) -> str:
        return f"the mask hides key {j} from query {i}"


EXERCISE = SdpaMask(
    "sdpa_mask",
    ("scaled_dot_product_attention", "run_scaled_dot_product_attention"),
    reference,
    checks=CHECKS,
    inputs=("q", "k", "v", "mask"),
    results=(OUT,),
    lead=(1, 3),
    value_size=True,
    options={"mask": MASKS, "fully_masked": FULLY_MASKED, "weights_returned": WEIGHTS_RETURNED},
    forbidden_caption="the keys the mask hides",
).configured({})
