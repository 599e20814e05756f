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
    s = dot_scores(q, k)
    if causal:
        # hide what comes later
        n = s.shape[-1]
        ok = causal_mask(n, s.device)
        s = s.masked_fill(
            ok.logical_not(),
            float('-inf'),
        )
    attn = torch.softmax(s, dim=-1)
    result = torch.matmul(attn, v)
    return result, attn


def dot_scores(a, b):
    d = a.shape[-1]
    return torch.matmul(a, b.transpose(-1, -2)) / math.sqrt(d)  # scaled


if __name__ == "__main__":
    q = torch.randn(2, 4, 8)
    k = torch.randn(2, 4, 8)
    v = torch.randn(2, 4, 8)
    out, weights = scaled_dot_product_attention(q, k, v)
    print(out.shape, weights.shape)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 4))
    assert torch.all(weights.triu(1) == 0)
