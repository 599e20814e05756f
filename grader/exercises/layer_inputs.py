"""The inputs of a layer with given weights (mha_layer, mha_layer_rope), in the checks' order: (d_model, num_heads,
W_Q, W_K, W_V, W_O, in_features), drawn from sizes and a seed (hypothesis shrinks those, not thousands of weights);
the changes the checks make to them (a token moved, a head's rows, the layer grown by zero heads or features); and
their words in a failure."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from hypothesis import strategies as st

from grader.checks.core import Ctx
from grader.checks.reach import Form

WQ, WK, WV, WO, X = 2, 3, 4, 5, 6  # where each tensor is in a call's arguments
INPUTS = ("d_model", "num_heads", "q_proj_weight", "k_proj_weight", "v_proj_weight", "o_proj_weight", "in_features")


# -- drawing: sizes and a seed; x [batch..., T, d_model] and the four weights ------------------------------------------
def made(g: torch.Generator, batch: tuple, t: int, heads: int, hs: int, dtype) -> tuple:
    d = heads * hs
    x = torch.randn(*batch, t, d, generator=g, dtype=torch.float64).to(dtype)
    w = [(torch.randn(d, d, generator=g, dtype=torch.float64) * d**-0.5).to(dtype) for _ in range(4)]
    return (d, heads, *w, x)


@st.composite
def drawn(draw, lead=(1, 1), b=(1, 2), t=(1, 6), heads=(1, 3), size=(1, 3), dtypes=(np.float32,), step=1):
    """`step`: the head size is a multiple of it (RoPE turns pairs of features)."""
    dtype = {np.float32: torch.float32, np.float64: torch.float64}[draw(st.sampled_from(dtypes))]
    n = draw(st.integers(*lead))
    batch = tuple(draw(st.integers(*b)) if i == 0 else draw(st.integers(1, 2)) for i in range(n))
    t_, h, hs = (draw(st.integers(*r)) for r in (t, heads, size))
    return made(torch.Generator().manual_seed(draw(st.integers(0, 2**16 - 1))), batch, t_, h, hs * step, dtype)


def drawing(ctx: Ctx, lead=(1, 2), dtypes=(np.float32,), **kw):
    """drawn() within what the function handles (its reach): its numbers of batch dims and its dtypes."""
    if ctx.reach is not None:
        lead, dtypes = ctx.reach.dims(*lead), ctx.reach.dtypes(dtypes)
    return drawn(lead=lead, dtypes=dtypes, step=ctx.exercise.step, **kw)


def said(args) -> str:
    d, heads, x = args[0], args[1], args[X]
    dtype = str(x.dtype).removeprefix("torch.")
    return (f"in_features of shape {tuple(x.shape)} {dtype} (T={x.shape[-2]}, d_model={d}, "
            f"{heads} head{'s' * (heads > 1)} of size {d // heads})")


def out_of(ctx: Ctx, args, **kw) -> torch.Tensor:
    return ctx.call_all(*args, **kw)[0]


def replaced(args, at: dict) -> tuple:
    """args with the tensors at some places (WQ... X) replaced."""
    return tuple(at.get(i, a) for i, a in enumerate(args))


def token(x: torch.Tensor, j: int) -> str:
    """'x[0, 3]': token j of the first sequence, with every batch dim at 0."""
    return ", ".join(["0"] * (x.dim() - 2) + [str(j)])


def moved(w: torch.Tensor) -> torch.Tensor:
    return -2 * w + 0.5


@st.composite
def with_token(draw, inputs):
    args = draw(inputs)
    return args, draw(st.integers(1, args[X].shape[-2] - 1))


@st.composite
def with_feature(draw, inputs):
    args = draw(inputs)
    return args, draw(st.integers(0, args[0] - 1))


def block(h: int, hs: int) -> slice:
    return slice(h * hs, (h + 1) * hs)


@st.composite
def two_heads(draw, inputs):
    args = draw(inputs)
    h = draw(st.integers(0, args[1] - 1))
    return args, (h, draw(st.sampled_from([g for g in range(args[1]) if g != h])))


def more_heads(args) -> tuple:
    """The same layer with as many heads again, all of zero weights (d_model doubled, d_head kept): its output is
    the old one, padded with zeros."""
    d, heads = args[0], args[1]
    w = []
    for i in (WQ, WK, WV, WO):
        big = torch.zeros(2 * d, 2 * d, dtype=args[i].dtype)
        big[:d, :d] = args[i]
        w.append(big)
    return (2 * d, 2 * heads, *w, torch.nn.functional.pad(args[X], (0, d)))


def wider_heads(args) -> tuple:
    """The same layer with each head padded with zero features to 4 times its size and W_Q doubled: q k^T doubles
    and 1/sqrt(d_head) halves, so its output is the old one, padded with zeros."""
    d, heads = args[0], args[1]
    hs = d // heads
    rows = torch.tensor([h * 4 * hs + r for h in range(heads) for r in range(hs)])  # each old row's new place
    w = []
    for i in (WQ, WK, WV):
        big = torch.zeros(4 * d, 4 * d, dtype=args[i].dtype)
        big[rows, :d] = args[i] * (2 if i == WQ else 1)
        w.append(big)
    w_o = torch.zeros(4 * d, 4 * d, dtype=args[WO].dtype)
    w_o[:d, rows] = args[WO]
    return (4 * d, heads, *w, w_o, torch.nn.functional.pad(args[X], (0, 3 * d)))


# -- the exercise -------------------------------------------------------------------------------------------------
LAYOUTS = {0: "[T, d_model]", 1: "[B, T, d_model]", 2: "[B, S, T, d_model]"}


@dataclass(frozen=True)
class LayerForm(Form):
    """in_features with `dims` batch dims, of a dtype."""

    def words(self) -> str:
        return f"{LAYOUTS.get(self.dims, f'{self.dims + 2}-D')} {str(self.dtype).removeprefix('torch.')}"
