# CORRECT: computes attention in float64 internally, casts outputs back to the input dtype.
import math

import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    dtype = q.dtype
    q, k, v = q.double(), k.double(), v.double()
    T, H = q.size(-2), q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(H)
    if causal:
        tril = torch.tril(torch.ones(T, T, dtype=torch.bool, device=q.device))
        scores = scores.masked_fill(~tril, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    out = weights @ v
    return out.to(dtype), weights.to(dtype)
