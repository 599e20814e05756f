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
    # step 1: similarity of each query with each key
    z = torch.einsum('...id,...jd->...ij', q, k) * q.shape[-1] ** -0.5
    # step 2: no peeking at the future
    if causal:
        allowed = causal_mask(q.shape[-2], device=q.device)
        z = torch.where(
            allowed,
            z,
            torch.tensor(float('-inf'), dtype=z.dtype, device=z.device),
        )
    # step 3: normalise and mix the values
    p = my_softmax(z)
    return torch.einsum('...ij,...jd->...id', p, v), p


def my_softmax(t):
    # subtract the max first so exp cannot overflow
    t = t - t.amax(dim=-1, keepdim=True)
    ex = torch.exp(t)
    return ex / ex.sum(dim=-1, keepdim=True)


if __name__ == "__main__":
    q = torch.randn(2, 4, 8)
    k = torch.randn(2, 4, 8)
    v = torch.randn(2, 4, 8)
    out, weights = scaled_dot_product_attention(q, k, v)
    print(out.shape, weights.shape)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 4))
    assert torch.all(weights.triu(1) == 0)
