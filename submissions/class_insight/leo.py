"""Chapter 5 exercise: causal scaled dot-product attention.

Fill in scaled_dot_product_attention below; keep its signature. Run this file to try it.
"""
import math

import torch


def causal_mask(t: int, device=None) -> torch.Tensor:
    """[t, t] bool: True where query i may attend to key j (j <= i)."""
    return torch.ones(t, t, dtype=torch.bool, device=device).tril()


def normalise(x):
    """Rows that sum to one."""
    return x.softmax(dim=-1)


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    """q, k, v: [..., T, H]. Returns (out [..., T, H], weights [..., T, T])."""
    d = k.size(-1)
    s = q.matmul(k.transpose(-1, -2)) / math.sqrt(d)
    t = s.size(-1)
    if causal:
        hidden = torch.ones(t, t, device=s.device).triu(1).bool()
        s = s.masked_fill(hidden, -math.inf)
    p = normalise(s)
    p = normalise(p)  # make sure the rows are normalised
    return p.matmul(v), p


if __name__ == "__main__":
    q = torch.randn(2, 4, 8)
    k = torch.randn(2, 4, 8)
    v = torch.randn(2, 4, 8)
    out, weights = scaled_dot_product_attention(q, k, v)
    print(out.shape, weights.shape)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 4))
    assert torch.all(weights.triu(1) == 0)
