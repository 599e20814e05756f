# CORRECT: the text's version with nan_to_num after the softmax; returns a plain 2-tuple.
import math

import torch


def masked_self_attention(query, key, value, padding_mask=None):
    T = query.shape[-2]
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    allowed = torch.tril(torch.ones(T, T, dtype=torch.bool, device=query.device))[None, None]
    if padding_mask is not None:
        allowed = allowed & padding_mask.bool().unsqueeze(1).unsqueeze(2)  # [B, 1, 1, T]
    weights = torch.nan_to_num(torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1), nan=0.0)
    return weights @ value, weights
