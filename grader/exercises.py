"""The exercises we grade: how to call a submission, the shapes it must return, and its reference."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Exercise:
    name: str
    entry_points: tuple[str, ...]
    reference: Callable[[], Callable]  # imported lazily: only the grader process ever loads a reference

    def expect(self, q, k, v) -> list[tuple[int, ...]]:
        """Shapes of (out, weights) for these inputs: out like q with v's last dim, weights [..., T, T]."""
        t = q.shape[-2]
        return [tuple(q.shape[:-1]) + (v.shape[-1],), tuple(q.shape[:-2]) + (t, t)]


def _chapter5():
    from reference.chapter5 import scaled_dot_product_attention

    return scaled_dot_product_attention


def _masked():
    from reference.masked import masked_self_attention

    return masked_self_attention


EXERCISES = {
    "chapter5": Exercise(
        "chapter5",
        ("scaled_dot_product_attention", "attention", "causal_attention", "causal_self_attention"),
        _chapter5,
    ),
    "masked_self_attention": Exercise("masked_self_attention", ("masked_self_attention",), _masked),
}
