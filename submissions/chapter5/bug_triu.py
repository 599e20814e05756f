# BUG: uses triu instead of tril for the allowed region (each position sees the future, not the past).
import math

import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    T, H = q.size(-2), q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(H)
    if causal:
        allowed = torch.triu(torch.ones(T, T, dtype=torch.bool, device=q.device))
        scores = scores.masked_fill(~allowed, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    out = weights @ v
    return out, weights
