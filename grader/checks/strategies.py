"""Hypothesis strategies for attention inputs.

Arrays come from `hypothesis.extra.numpy.arrays`, which shrinks element by element towards small, simple values,
so a failure ends as the smallest T, H and batch that still shows the bug. Bugs hide at T=1, at H=1 (scaling)
and with tiny scores, so the defaults start at T=2, H=2.
"""

from __future__ import annotations

import functools
import math
from typing import Literal

import numpy as np
import torch
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


@functools.lru_cache(maxsize=4096)
def arrays(dtype, shape, *, elements):
    """hypothesis' `arrays`, one strategy object per (dtype, shape, elements): a new object would be validated again
    on each draw. The draws, and so every verdict, are the same."""
    return hnp.arrays(dtype, shape, elements=elements)


def _floats(dtype, scale: float, low: float | None = None):
    width: Literal[32, 64] = 32 if dtype == np.float32 else 64
    lo = -scale if low is None else low
    return st.floats(lo, scale, width=width, allow_subnormal=False)


@st.composite
def qkv(draw, t=(2, 6), h=(2, 6), b=(1, 2), lead=(1, 1), heads=(1, 2), dtypes=(np.float32,), scale: float = 3.0,
        dv: bool = False, kv_heads: int | None = None):
    """(q, k, v) of shape [B, (heads,) T, H]: lead=(1, 2) also draws a heads dim (of a size in `heads`); dv: v's last
    dim drawn on its own (Dv != Dk), so that a scale taken from v.size(-1) shows; kv_heads: k and v have that many
    heads (dim 1, lead=(2, 2)), q its own (grouped-query attention)."""
    dtype = draw(st.sampled_from(dtypes))
    dims = draw(st.integers(*lead))
    shape = (draw(st.integers(*b)),) + tuple(draw(st.integers(*heads)) for _ in range(dims - 1))
    shape += (draw(st.integers(*t)), draw(st.integers(*h)))
    k_shape = shape if kv_heads is None else (shape[0], kv_heads, *shape[2:])
    v_shape = k_shape[:-1] + (draw(st.integers(*h)),) if dv else k_shape
    elements = _floats(dtype, scale)
    return tuple(torch.from_numpy(draw(arrays(dtype, s, elements=elements))) for s in (shape, k_shape, v_shape))


@st.composite
def negative_scores(draw, t=(2, 6), h=(2, 6), lead: int = 1, size: float = 30.0, spread: float = 0.5,
                    future_high: bool = False):
    """float32 inputs whose every real score is strongly negative, between -(1 - spread)**2 and -(1 + spread)**2
    times `size` (by default about -7 to -70): a 0 fill wins there. future_high: every key but the first scores
    as high instead, so query 0's one real score is far below its masked ones: with size 1.5e4 a -1e4 fill,
    added or put in place, wins there too. `lead` dims before [T, H]: the batch, then heads of size 1 or 2."""
    shape = (draw(st.integers(1, 2)),) + tuple(draw(st.integers(1, 2)) for _ in range(lead - 1))
    shape += (draw(st.integers(*t)), draw(st.integers(*h)))
    pos = _floats(np.float32, 1 + spread, 1 - spread)
    x, y = (torch.from_numpy(draw(arrays(np.float32, shape, elements=pos))) for _ in range(2))
    v = torch.from_numpy(draw(arrays(np.float32, shape, elements=_floats(np.float32, 3.0))))
    s = math.sqrt(size / math.sqrt(shape[-1]))
    k = -s * y
    if future_high:
        k[..., 1:, :] *= -1
    return s * x, k, v


@st.composite
def with_position(draw, inputs, last: bool = False):
    """Inputs and a query position i (i < T-1 unless `last`), for properties about 'position i and before'."""
    x = draw(inputs)
    t = x[0].shape[-2]
    return x, draw(st.integers(0, t - 1 if last else t - 2))


@st.composite
def with_grad(draw, inputs):
    """Inputs and an upstream gradient for out."""
    q, k, v = draw(inputs)
    shape = q.shape[:-1] + v.shape[-1:]
    g = torch.from_numpy(draw(arrays(np.float64, shape, elements=_floats(np.float64, 1.0))))
    return (q, k, v), g.to(q.dtype)


@st.composite
def padding_masks(draw, b: int, t: int, real: bool = False):
    """[B, T] int64, 1 = real token, 0 = pad (the course text's LongTensor): a batch padded on the right or on
    the left, each sequence to its own length, or any pattern at all; at least one pad, and with `real` at least one
    real token (T >= 2). Shrinks towards fewer pads, so a failure ends at the smallest mask that still shows it. The
    pad and the real token are put in, not filtered for: the shrinker heads for no pad, which a filter refuses."""
    side = draw(st.sampled_from(["left", "right", "any"]))
    if side == "any":
        mask = torch.tensor([[int(not draw(st.booleans())) for _ in range(t)] for _ in range(b)])
    else:
        rows = []
        for _ in range(b):
            pads = draw(st.integers(0, t))
            rows.append([0] * pads + [1] * (t - pads) if side == "left" else [1] * (t - pads) + [0] * pads)
        mask = torch.tensor(rows, dtype=torch.int64)
    first, last = (0, -1) if side == "left" else (-1, 0)  # where a pad, then a real token, keeps the side's pattern
    if mask.all():
        mask[0, first] = 0
    if real and not mask.any():
        mask[0, last] = 1
    return mask


@st.composite
def with_padding(draw, inputs, real: bool = False):
    """Inputs [B, ..., T, H] and a padding mask [B, T] for them (see padding_masks)."""
    x = draw(inputs)
    return x, draw(padding_masks(x[0].shape[0], x[0].shape[-2], real))
