"""Chapter 5 exercise: causal scaled dot-product attention.

Fill in scaled_dot_product_attention below; keep its signature. Run this file to try it.
"""
import math

import torch
import torch.nn.functional as F


def causal_mask(t: int, device=None) -> torch.Tensor:
    """[t, t] bool: True where query i may attend to key j (j <= i)."""
    return torch.ones(t, t, dtype=torch.bool, device=device).tril()


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    """q, k, v: [..., T, H]. Returns (out [..., T, H], weights [..., T, T])."""
    n, dim = q.shape[-2], q.shape[-1]
    logits = q.matmul(k.transpose(-2, -1)).div(dim**0.5)
    if causal:
        # an additive bias: 0 on and below the diagonal, -inf above it
        bias = torch.full((n, n), float("-inf"), dtype=q.dtype, device=q.device).triu(diagonal=1)
        logits = logits + bias
    attention = F.softmax(logits, dim=-1)
    return attention.matmul(v), attention


if __name__ == "__main__":
    q = torch.randn(2, 4, 8)
    k = torch.randn(2, 4, 8)
    v = torch.randn(2, 4, 8)
    out, weights = scaled_dot_product_attention(q, k, v)
    print(out.shape, weights.shape)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 4))
    assert torch.all(weights.triu(1) == 0)
