# BUG: causal softmax first, then multiplies by the padding mask without renormalising (real rows sum to < 1).
import math

import torch


def masked_self_attention(query, key, value, padding_mask=None):
    T = query.size(-2)
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    causal = torch.ones(T, T, dtype=torch.bool, device=query.device).tril()
    weights = torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1)
    if padding_mask is not None:
        weights = weights * padding_mask[:, None, None, :].to(weights.dtype)
    return weights @ value, weights
