"""Chapter 5 exercise: causal scaled dot-product attention.

Fill in scaled_dot_product_attention below; keep its signature. Run this file to try it.
"""
import math

import torch


def causal_mask(t: int, device=None) -> torch.Tensor:
    """[t, t] bool: True where query i may attend to key j (j <= i)."""
    return torch.ones(t, t, dtype=torch.bool, device=device).tril()


def stable_softmax(x):
    x = x - x.amax(dim=-1, keepdim=True)
    e = torch.exp(x)
    return e / e.sum(dim=-1, keepdim=True)


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    """q, k, v: [..., T, H]. Returns (out [..., T, H], weights [..., T, T])."""
    logits = torch.einsum("...id,...jd->...ij", q, k) * q.shape[-1] ** -0.5
    if causal:
        keep = causal_mask(q.shape[-2], device=q.device)
        logits = torch.where(keep, logits, torch.tensor(float("-inf"), dtype=logits.dtype, device=logits.device))
    probs = stable_softmax(logits)
    return torch.einsum("...ij,...jd->...id", probs, v), probs


if __name__ == "__main__":
    q = torch.randn(2, 4, 8)
    k = torch.randn(2, 4, 8)
    v = torch.randn(2, 4, 8)
    out, weights = scaled_dot_product_attention(q, k, v)
    print(out.shape, weights.shape)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 4))
    assert torch.all(weights.triu(1) == 0)
