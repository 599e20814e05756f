# BUG: masks only the prefill ("with a cache we are decoding: every key is in the past"), so a chunk of several new
# tokens after a past sees its own future. Right for one token at a time.
import math

import torch


def cached_attention(q, k, v, cache=None):
    scores_mask = None
    if cache is None:
        T = q.size(-2)
        scores_mask = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
    else:
        k = torch.cat([cache[0], k], dim=2)
        v = torch.cat([cache[1], v], dim=2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if scores_mask is not None:
        scores = scores.masked_fill(~scores_mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights, (k, v)
