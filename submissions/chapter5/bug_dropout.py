# BUG: dropout on the attention weights left on (p=0.1, as in training): the same inputs give different results.
import math

import torch
import torch.nn.functional as F


def scaled_dot_product_attention(q, k, v, causal=True):
    T = q.size(-2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if causal:
        scores = scores.masked_fill(~torch.ones(T, T, dtype=torch.bool, device=q.device).tril(), float("-inf"))
    weights = F.dropout(torch.softmax(scores, dim=-1), p=0.1)
    return weights @ v, weights
