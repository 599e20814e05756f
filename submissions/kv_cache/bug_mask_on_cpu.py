# BUG: the mask is built without device=..., so it lives on the CPU and breaks for inputs on a GPU.
import math

import torch


def cached_attention(q, k, v, cache=None):
    if cache is not None:
        k_past, v_past = cache
        k = torch.cat([k_past, k], dim=2)
        v = torch.cat([v_past, v], dim=2)
    T_new, T_all = q.size(-2), k.size(-2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    allowed = torch.ones(T_new, T_all, dtype=torch.bool).tril(diagonal=T_all - T_new)
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return weights @ v, weights, (k, v)
