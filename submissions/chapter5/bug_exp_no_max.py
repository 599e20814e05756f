# BUG: hand-written softmax exp(s)/sum(exp(s)) without subtracting the row max -> overflows (inf/inf = NaN) for large scores.
import math

import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    T, H = q.size(-2), q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(H)
    if causal:
        tril = torch.tril(torch.ones(T, T, dtype=torch.bool, device=q.device))
        scores = scores.masked_fill(~tril, float("-inf"))  # exp(-inf) = 0
    e = torch.exp(scores)
    weights = e / e.sum(dim=-1, keepdim=True)
    out = weights @ v
    return out, weights
