"""Chapter 5 exercise: causal scaled dot-product attention.

Fill in scaled_dot_product_attention below; keep its signature. Run this file to try it.
"""
import math

import torch


def causal_mask(t: int, device=None) -> torch.Tensor:
    """[t, t] bool: True where query i may attend to key j (j <= i)."""
    return torch.ones(t, t, dtype=torch.bool, device=device).tril()


def similarity_scores(query, key):
    # raw dot products between every query and every key, scaled by the head size
    head_size = query.shape[-1]
    return torch.matmul(query, key.transpose(-1, -2)) / math.sqrt(head_size)


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    """q, k, v: [..., T, H]. Returns (out [..., T, H], weights [..., T, T])."""
    scores = similarity_scores(q, k)
    if causal:
        length = scores.shape[-1]
        visible = causal_mask(length, scores.device)
        # a future key gets -inf, so exp() gives it exactly zero weight
        scores = scores.masked_fill(visible.logical_not(), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    out = torch.matmul(weights, v)
    return out, weights


if __name__ == "__main__":
    q = torch.randn(2, 4, 8)
    k = torch.randn(2, 4, 8)
    v = torch.randn(2, 4, 8)
    out, weights = scaled_dot_product_attention(q, k, v)
    print(out.shape, weights.shape)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 4))
    assert torch.all(weights.triu(1) == 0)
