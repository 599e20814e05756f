# BUG: repeat_kv with unsqueeze(-2) instead of unsqueeze(2): the new axis lands after the time axis, so the reshape
# to Hq heads mixes positions into heads and each query head reads a jumble of positions, the future included.
import math

import torch


def repeat_kv(x, n_rep):
    B, H, T, D = x.shape
    return x.unsqueeze(-2).expand(B, H, T, n_rep, D).reshape(B, H * n_rep, T, D)


def grouped_query_attention(q, k, v):
    group = q.size(1) // k.size(1)
    k, v = repeat_kv(k, group), repeat_kv(v, group)
    T = q.size(-2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=q.device), diagonal=1)
    weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
    return weights @ v, weights
