"""Chapter 5 exercise: causal scaled dot-product attention.

Fill in scaled_dot_product_attention below; keep its signature. Run this file to try it.
"""
import math

import torch


def causal_mask(t: int, device=None) -> torch.Tensor:
    """[t, t] bool: True where query i may attend to key j (j <= i)."""
    return torch.ones(t, t, dtype=torch.bool, device=device).tril()


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    """q, k, v: [..., T, H]. Returns (out [..., T, H], weights [..., T, T])."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if causal:
        future = ~causal_mask(q.size(-2), q.device)
        scores = scores.masked_fill(future, 0.0)  # drop the future
    w = scores.softmax(-1)
    return w @ v, w


if __name__ == "__main__":
    q = torch.randn(2, 4, 8)
    k = torch.randn(2, 4, 8)
    v = torch.randn(2, 4, 8)
    out, weights = scaled_dot_product_attention(q, k, v)
    print(out.shape, weights.shape)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 4))
    assert torch.all(weights.triu(1) == 0)
