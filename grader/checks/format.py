"""How checks word what they found: the inputs' shapes, a position, a value, the first mismatch."""

from __future__ import annotations

import math

import torch


def shape_of(q, **kw) -> str:
    *lead, t, h = q.shape
    extra = "".join(f", {n}={_short(x)}" for n, x in kw.items())
    return f"q, k, v of shape {tuple(q.shape)} {str(q.dtype).removeprefix('torch.')} (T={t}, H={h}{extra})"


def shown(kw: dict) -> dict:
    """The keyword arguments a student passed, without the grader's own request options."""
    return {n: x for n, x in kw.items() if n != "return_inputs"}


def _short(x) -> str:
    if isinstance(x, torch.Tensor):
        return str(x.to(torch.int64).tolist()) if x.numel() <= 16 else f"tensor{tuple(x.shape)}"
    return repr(x)


def idx(t: torch.Tensor, mask: torch.Tensor) -> tuple[int, ...]:
    return tuple(int(i) for i in torch.nonzero(mask)[0])


def fmt(x: float) -> str:
    return f"{x:.4g}" if math.isfinite(x) else str(x)


def at(name: str, index: tuple[int, ...]) -> str:
    return f"{name}[{', '.join(map(str, index))}]"


def mismatch(name: str, got: torch.Tensor, want: torch.Tensor, rtol: float, atol: float) -> str | None:
    """None when close; else where and by how much, e.g. 'weights[0, 1, 0] = 0.38, expected 0.5'."""
    if got.shape != want.shape:
        return f"{name} has shape {tuple(got.shape)}, expected {tuple(want.shape)}"
    bad = ~torch.isclose(got.to(want.dtype), want, rtol=rtol, atol=atol, equal_nan=True)
    if not bad.any():
        return None
    i = idx(got, bad)
    g, w = float(got[i]), float(want[i])
    close = fmt(g) == fmt(w) and math.isfinite(g - w)
    return f"{at(name, i)} = {fmt(g)}, expected {fmt(w)}" + (f" (they differ by {abs(g - w):.2g})" if close else "")


def future(t: int) -> torch.Tensor:
    return torch.ones(t, t, dtype=torch.bool).triu(1)


def perturb(x: torch.Tensor, sel) -> torch.Tensor:
    """A copy of x with the selected rows replaced by a different, deterministic value."""
    y = x.clone()
    y[sel] = -2 * y[sel] + 1
    return y


