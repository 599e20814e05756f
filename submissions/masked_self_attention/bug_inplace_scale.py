# BUG: scales the query in place (query /= sqrt(Dk)), silently modifying the caller's tensor.
import math

import torch


def masked_self_attention(query, key, value, padding_mask=None):
    T = query.size(-2)
    query /= math.sqrt(query.size(-1))
    scores = query @ key.transpose(-2, -1)
    allowed = torch.ones(T, T, dtype=torch.bool, device=query.device).tril()[None, None]
    if padding_mask is not None:
        allowed = allowed & padding_mask[:, None, None, :].bool()
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1).nan_to_num(0.0)
    return weights @ value, weights
