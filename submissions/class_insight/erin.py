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
    T = q.shape[-2]
    rows = []
    for i in range(T):
        last = i + 1 if causal else T  # query i sees keys 0..i
        row = (q[..., i : i + 1, :] * k[..., :last, :]).sum(-1) / math.sqrt(q.shape[-1])
        row = torch.softmax(row, dim=-1)
        pad = row.new_zeros(*row.shape[:-1], T - last)
        rows.append(torch.cat([row, pad], dim=-1))
    weights = torch.stack(rows, dim=-2)
    return weights @ v, weights


if __name__ == "__main__":
    q = torch.randn(2, 4, 8)
    k = torch.randn(2, 4, 8)
    v = torch.randn(2, 4, 8)
    out, weights = scaled_dot_product_attention(q, k, v)
    print(out.shape, weights.shape)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 4))
    assert torch.all(weights.triu(1) == 0)
