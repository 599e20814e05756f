# CORRECT: hand-written numerically stable softmax (subtract row max); masked entries exactly 0.
import math

import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    T, H = q.size(-2), q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(H)
    if causal:
        tril = torch.tril(torch.ones(T, T, dtype=torch.bool, device=q.device))
        scores = scores.masked_fill(~tril, float("-inf"))
    row_max = scores.max(dim=-1, keepdim=True).values  # finite: the diagonal is never masked
    e = torch.exp(scores - row_max)  # exp(-inf) == 0 exactly
    weights = e / e.sum(dim=-1, keepdim=True)
    out = weights @ v
    return out, weights
