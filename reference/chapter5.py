"""Chapter 5 reference: causal scaled dot-product attention that also returns its weights."""

import math

import torch


def scaled_dot_product_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = True):
    """q, k, v: [..., T, H] -> out [..., T, H], weights [..., T, T]; future keys (j > i) masked when causal."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if causal:
        t = q.size(-2)
        allowed = torch.ones(t, t, dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~allowed, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
