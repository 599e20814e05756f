# BUG: hand-written softmax exp(s) / sum(exp(s)) without subtracting the row max: overflows (inf/inf = NaN) for large scores.
import math

import torch


def masked_self_attention(query, key, value, padding_mask=None):
    T = query.size(-2)
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    allowed = torch.ones(T, T, dtype=torch.bool, device=query.device).tril()[None, None]
    if padding_mask is not None:
        allowed = allowed & padding_mask[:, None, None, :].bool()
    e = torch.exp(scores.masked_fill(~allowed, float("-inf")))
    total = e.sum(dim=-1, keepdim=True)
    weights = e / torch.where(total > 0, total, torch.ones_like(total))  # rows that see nothing stay 0
    return weights @ value, weights
