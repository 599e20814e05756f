# BUG: every batch element attends to the keys and values of element 0 (k[:1], v[:1] broadcast over the batch):
# element 0's result is right and no change to elements 1.. reaches it, yet every other element is wrong.
import math

import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    T = q.size(-2)
    k, v = k[:1], v[:1]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if causal:
        scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
