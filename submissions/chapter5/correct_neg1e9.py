# CORRECT: causal attention masking the future with a large negative number (-1e9).
import math

import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    T, H = q.size(-2), q.size(-1)
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(H)
    if causal:
        mask = torch.tril(torch.ones(T, T, device=q.device))
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    out = torch.matmul(weights, v)
    return out, weights
