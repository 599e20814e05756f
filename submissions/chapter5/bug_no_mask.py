# BUG: never applies the causal mask (every position sees the future, even with causal=True).
import math

import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    H = q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(H)
    weights = torch.softmax(scores, dim=-1)
    out = weights @ v
    return out, weights
