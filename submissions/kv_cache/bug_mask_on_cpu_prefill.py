# BUG: the prefill path (no cache) builds its causal mask without device=, the cached path with it: right on the
# CPU, and a GPU user crashes on the very first call, before any token is cached.
import math

import torch


def cached_attention(q, k, v, cache=None):
    T_new = q.size(-2)
    if cache is None:
        allowed = torch.ones(T_new, T_new, dtype=torch.bool).tril()
    else:
        k_past, v_past = cache
        k = torch.cat([k_past, k], dim=2)
        v = torch.cat([v_past, v], dim=2)
        allowed = torch.ones(T_new, k.size(-2), dtype=torch.bool, device=q.device).tril(diagonal=k.size(-2) - T_new)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return weights @ v, weights, (k, v)
