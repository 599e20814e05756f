# BUG: q.div_(sqrt(D)) scales the caller's q in place.
import math

import torch


def grouped_query_attention(q, k, v):
    group = q.size(1) // k.size(1)
    q = q.div_(math.sqrt(q.size(-1)))
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    T = q.size(-2)
    future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=q.device), diagonal=1)
    weights = torch.softmax((q @ k.transpose(-2, -1)).masked_fill(future, float("-inf")), dim=-1)
    return weights @ v, weights
