"""How checks word what they found: the inputs' shapes, a position, a value, the first mismatch."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import cast

import torch


def shape_of(q, *kv, **kw) -> str:
    """'q, k, v of shape (2, 3, 4) float32 (T=3, H=4, causal=False)'; k and v (`kv`, when given) are named apart
    when their shapes differ from q's (see `inputs_named`)."""
    *lead, t, h = q.shape
    extra = "".join(f", {n}={_short(x)}" for n, x in kw.items())
    return f"{inputs_named(q, *kv)} {str(q.dtype).removeprefix('torch.')} (T={t}, H={h}{extra})"


def inputs_named(q, *kv) -> str:
    """'q, k, v of shape (1, 4, 3, 2)', or 'q of shape (1, 4, 3, 2), k, v of shape (1, 2, 3, 2)' when k and v (`kv`)
    have other shapes than q."""
    groups: list[list] = [["q, k, v", tuple(q.shape)]]
    if any(x.shape != q.shape for x in kv):
        groups = [["q", tuple(q.shape)]]
        for name, x in zip("kv", kv):
            if tuple(x.shape) == groups[-1][1]:
                groups[-1][0] += f", {name}"
            else:
                groups.append([name, tuple(x.shape)])
    return ", ".join(f"{names} of shape {shape}" for names, shape in groups)


def shown(kw: dict) -> dict:
    """The keyword arguments a student passed, without the grader's own request options."""
    return {n: x for n, x in kw.items() if n != "return_inputs"}


def _short(x) -> str:
    if isinstance(x, (tuple, list)) and x and all(isinstance(t, torch.Tensor) for t in x):  # a KV cache
        shapes = {tuple(t.shape) for t in x}
        return f"{len(x)} tensors of shape {shapes.pop()}" if len(shapes) == 1 else f"tensors of shapes {', '.join(str(tuple(t.shape)) for t in x)}"
    if isinstance(x, torch.Tensor):
        return str(x.to(torch.int64).tolist()) if x.numel() <= 16 else f"tensor{tuple(x.shape)}"
    return repr(x)


def idx(t: torch.Tensor, mask: torch.Tensor) -> tuple[int, ...]:
    return tuple(int(i) for i in torch.nonzero(mask)[0])


def fmt(x: float) -> str:
    return f"{x:.4g}" if math.isfinite(x) else str(x)


def at(name: str, index: tuple[int, ...]) -> str:
    return f"{name}[{', '.join(map(str, index))}]"


@dataclass(frozen=True)
class Mismatch:
    """Where a result differs from what it should be, as data; `str()` is the sentence the checks say
    ('weights[0, 1, 0] = 0.38, expected 0.5'), and `said` the same with another word for "expected"."""

    name: str
    index: tuple[int, ...] | None  # None: the shapes differ
    got: float | tuple[int, ...]  # the value there, or the shape
    want: float | tuple[int, ...]
    note: str = ""  # what the values suggest besides (computed in half precision)

    @property
    def where(self) -> str:
        """'weights[0, 1, 0]', or the name when the shapes differ."""
        return self.name if self.index is None else at(self.name, self.index)

    def said(self, expected: str = "expected") -> str:
        if self.index is None:
            text = f"{self.name} has shape {self.got}, {expected} {self.want}"
        else:
            g, w = cast(float, self.got), cast(float, self.want)  # values, where an index is given
            close = fmt(g) == fmt(w) and math.isfinite(g - w)
            text = f"{self.where} = {fmt(g)}, {expected} {fmt(w)}" + (f" (they differ by {abs(g - w):.2g})" if close else "")
        return f"{text}; {self.note}" if self.note else text

    def __str__(self) -> str:
        return self.said()

    def in_element(self, b: int) -> Mismatch:
        """The same position in batch element b (of a result computed for that element alone)."""
        return self if self.index is None else replace(self, index=(b, *self.index[1:]))


def mismatch(name: str, got: torch.Tensor, want: torch.Tensor, rtol: float, atol: float) -> Mismatch | None:
    """None when close; else the first position where they differ, and by how much."""
    if got.shape != want.shape:
        return Mismatch(name, None, tuple(got.shape), tuple(want.shape))
    bad = ~torch.isclose(got.to(want.dtype), want, rtol=rtol, atol=atol, equal_nan=True)
    if not bad.any():
        return None
    i = idx(got, bad)
    return Mismatch(name, i, float(got[i]), float(want[i]))


def future(t: int) -> torch.Tensor:
    return torch.ones(t, t, dtype=torch.bool).triu(1)


def perturb(x: torch.Tensor, sel) -> torch.Tensor:
    """A copy of x with the selected rows replaced by a different, deterministic value."""
    y = x.clone()
    y[sel] = -2 * y[sel] + 1
    return y


def query_heads(t: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """k or v repeated to q's heads (dim -3) when it has fewer (grouped-query attention: query head h reads
    key/value head h // group); t itself otherwise."""
    if t.dim() < 3 or t.shape[-3] == q.shape[-3]:
        return t
    return t.repeat_interleave(q.shape[-3] // t.shape[-3], dim=-3)
