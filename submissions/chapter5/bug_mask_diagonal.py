# BUG: allowed region is tril(diagonal=-1), so a position cannot see itself (row 0 fully masked -> NaN).
import math

import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    T, H = q.size(-2), q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(H)
    if causal:
        # only attend to strictly earlier positions
        allowed = torch.tril(torch.ones(T, T, dtype=torch.bool, device=q.device), diagonal=-1)
        scores = scores.masked_fill(~allowed, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    out = weights @ v
    return out, weights
