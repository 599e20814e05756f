# BUG: divides the scores by sqrt(Hq * D), the model width, instead of sqrt(D), the head size.
import math

import torch


def grouped_query_attention(q, k, v):
    B, Hq, T, D = q.shape
    group = Hq // k.size(1)
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(Hq * D)
    future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=q.device), diagonal=1)
    weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
    return weights @ v, weights
