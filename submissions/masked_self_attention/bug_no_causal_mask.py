# BUG: applies only the padding mask: no causal mask, every query sees the future.
import math

import torch


def masked_self_attention(query, key, value, padding_mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if padding_mask is not None:
        scores = scores.masked_fill(padding_mask[:, None, None, :] == 0, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ value, weights
