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
    t, h = q.shape[-2], q.shape[-1]
    # broadcast every query against every key
    sc = (q.unsqueeze(-2) * k.unsqueeze(-3)).sum(dim=-1) * h ** -0.5
    if causal:
        ahead = torch.arange(t, device=q.device)[None, :] > torch.arange(t, device=q.device)[:, None]
        sc = sc.masked_fill(ahead, torch.finfo(sc.dtype).min)
    wts = sc.softmax(dim=-1)
    return (wts.unsqueeze(-1) * v.unsqueeze(-3)).sum(dim=-2), wts


if __name__ == "__main__":
    q = torch.randn(2, 4, 8)
    k = torch.randn(2, 4, 8)
    v = torch.randn(2, 4, 8)
    out, weights = scaled_dot_product_attention(q, k, v)
    print(out.shape, weights.shape)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 4))
    assert torch.all(weights.triu(1) == 0)
