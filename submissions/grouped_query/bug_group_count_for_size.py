# BUG: repeats each key/value head Hkv times (the number of groups) instead of Hq // Hkv (the group size): right
# only when Hkv * Hkv == Hq or Hkv == 1; multi-head attention (Hkv == Hq) breaks.
import math

import torch


def grouped_query_attention(q, k, v):
    n_groups = k.size(1)
    k = k.repeat_interleave(n_groups, dim=1)
    v = v.repeat_interleave(n_groups, dim=1)
    T = q.size(-2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=q.device), diagonal=1)
    weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
    return weights @ v, weights
