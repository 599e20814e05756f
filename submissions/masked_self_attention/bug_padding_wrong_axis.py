# BUG: padding_mask.unsqueeze(1) is [B, 1, T], which broadcasts as [1, B, 1, T]: sequence b's mask lands on head b.
import math

import torch


def masked_self_attention(query, key, value, padding_mask=None):
    T = query.size(-2)
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    allowed = torch.ones(T, T, dtype=torch.bool, device=query.device).tril()
    if padding_mask is not None:
        allowed = allowed & padding_mask.unsqueeze(1).bool()
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1).nan_to_num(0.0)
    return weights @ value, weights
