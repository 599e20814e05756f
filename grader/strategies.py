"""Hypothesis strategies for attention inputs.

Arrays come from `hypothesis.extra.numpy.arrays`, which shrinks element by element towards small, simple values,
so a failure ends as the smallest T, H and batch that still shows the bug. Bugs hide at T=1, at H=1 (scaling)
and with tiny scores, so the defaults start at T=2, H=2.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays


def _floats(dtype, scale: float, low: float | None = None):
    width = 32 if dtype == np.float32 else 64
    lo = -scale if low is None else low
    return st.floats(lo, scale, width=width, allow_subnormal=False)


@st.composite
def qkv(draw, t=(2, 6), h=(2, 6), b=(1, 2), lead=(1, 1), dtypes=(np.float32,), scale: float = 3.0):
    """(q, k, v) of shape [B, (heads,) T, H]: lead=(1, 2) also draws a heads dim."""
    dtype = draw(st.sampled_from(dtypes))
    dims = draw(st.integers(*lead))
    shape = (draw(st.integers(*b)),) + tuple(draw(st.integers(1, 2)) for _ in range(dims - 1))
    shape += (draw(st.integers(*t)), draw(st.integers(*h)))
    elements = _floats(dtype, scale)
    return tuple(torch.from_numpy(draw(arrays(dtype, shape, elements=elements))) for _ in range(3))


@st.composite
def negative_scores(draw, t=(2, 6), h=(2, 6)):
    """float32 inputs whose every real score is strongly negative (about -7 to -70): a 0 fill wins there."""
    shape = (draw(st.integers(1, 2)), draw(st.integers(*t)), draw(st.integers(*h)))
    pos = _floats(np.float32, 1.5, 0.5)
    x, y = (torch.from_numpy(draw(arrays(np.float32, shape, elements=pos))) for _ in range(2))
    v = torch.from_numpy(draw(arrays(np.float32, shape, elements=_floats(np.float32, 3.0))))
    s = math.sqrt(30 / math.sqrt(shape[-1]))
    return s * x, -s * y, v


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
