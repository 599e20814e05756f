# BUG: masks future and padded keys with 0.0 instead of -inf, so they still get weight exp(0).
import math

import torch


def masked_self_attention(query, key, value, padding_mask=None):
    T = query.size(-2)
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    allowed = torch.ones(T, T, dtype=torch.bool, device=query.device).tril()[None, None]
    if padding_mask is not None:
        allowed = allowed & padding_mask[:, None, None, :].bool()
    weights = torch.softmax(scores.masked_fill(~allowed, 0.0), dim=-1)
    return weights @ value, weights
