# BUG: divides by sqrt(d_model) = sqrt(heads * Dk) instead of sqrt(Dk), the size of one head.
import math

import torch


def masked_self_attention(query, key, value, padding_mask=None):
    B, H, T, Dk = query.shape
    scores = query @ key.transpose(-2, -1) / math.sqrt(H * Dk)
    allowed = torch.ones(T, T, dtype=torch.bool, device=query.device).tril()[None, None]
    if padding_mask is not None:
        allowed = allowed & padding_mask[:, None, None, :].bool()
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1).nan_to_num(0.0)
    return weights @ value, weights
