# BUG: out is right, but the weights returned are the softmax of the scores from before the mask was applied.
import math

import torch


def scaled_dot_product_attention(q, k, v, causal=True):
    T = q.size(-2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    unmasked = torch.softmax(scores, dim=-1)
    if causal:
        scores = scores.masked_fill(~torch.ones(T, T, dtype=torch.bool, device=q.device).tril(), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, unmasked
