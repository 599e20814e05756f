# BUG: the causal flag is read the wrong way round (`if not causal:`): no mask by default, a mask with causal=False.
import math

import torch


def scaled_dot_product_attention(q, k, v, causal=True):
    T = q.size(-2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if not causal:
        scores = scores.masked_fill(~torch.ones(T, T, dtype=torch.bool, device=q.device).tril(), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
