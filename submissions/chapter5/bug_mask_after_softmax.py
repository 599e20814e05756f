# BUG: softmax over all keys first, then zeroes the future with the tril mask without renormalising.
import math

import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    T, H = q.size(-2), q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(H)
    weights = torch.softmax(scores, dim=-1)
    if causal:
        tril = torch.tril(torch.ones(T, T, dtype=weights.dtype, device=q.device))
        weights = weights * tril  # rows no longer sum to 1
    out = weights @ v
    return out, weights
