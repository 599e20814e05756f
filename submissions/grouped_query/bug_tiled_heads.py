# BUG: k.repeat(1, group, 1, 1) tiles the heads (0, 1, 0, 1): query head h reads key/value head h % Hkv, not h // group.
import math

import torch


def grouped_query_attention(q, k, v):
    group = q.size(1) // k.size(1)
    k = k.repeat(1, group, 1, 1)
    v = v.repeat(1, group, 1, 1)
    T = q.size(-2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=q.device), diagonal=1)
    weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
    return weights @ v, weights
