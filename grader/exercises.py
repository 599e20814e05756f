"""The exercises we grade: how to call a submission, the shapes it must return, and its reference."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Exercise:
    name: str
    entry_points: tuple[str, ...]
    reference: Callable[[], Callable]  # imported lazily; returns (out, weights): only the grader process loads it
    lead: tuple[int, int] = (1, 6)  # how many dims before [T, H] the function must accept (min, max)
    heads: tuple[int, int] = (1, 2)  # sizes of a drawn heads dim (a multi-head exercise needs 2+ to show head mixing)

    def expect(self, q, k, v) -> list[tuple[int, ...]]:
        """Shapes of (out, weights) for these inputs: out like q with v's last dim, weights [..., T, T]."""
        t = q.shape[-2]
        return [tuple(q.shape[:-1]) + (v.shape[-1],), tuple(q.shape[:-2]) + (t, t)]

    def leads(self, lo: int, hi: int) -> tuple[int, int]:
        """A check's range of leading dims, narrowed to the ones this exercise takes (unchanged when it fits)."""
        lo = min(max(lo, self.lead[0]), self.lead[1])
        return lo, max(min(hi, self.lead[1]), lo)

    def fit(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """A fixed input shape with size-1 dims after the batch dim until it has as many leading dims as required."""
        missing = max(0, self.lead[0] - (len(shape) - 2))
        return shape[:1] + (1,) * missing + shape[1:]


def _chapter5():
    from reference.chapter5 import scaled_dot_product_attention

    return scaled_dot_product_attention


def _masked():
    from reference.masked import masked_self_attention

    def pair(*args, **kw):  # the reference returns a dataclass; checks compare (out, weights)
        result = masked_self_attention(*args, **kw)
        return result.hidden_states, result.attention_weights

    return pair


EXERCISES = {
    "chapter5": Exercise(
        "chapter5",
        ("scaled_dot_product_attention", "attention", "causal_attention", "causal_self_attention"),
        _chapter5,
    ),
    # q, k, v are [B, heads, T, Dk] exactly; padding_mask [B, T] is a 1/0 int64 tensor (1 = real token).
    "masked_self_attention": Exercise("masked_self_attention", ("masked_self_attention",), _masked, lead=(2, 2), heads=(2, 3)),
}
