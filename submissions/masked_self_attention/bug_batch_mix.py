# BUG: hand-written softmax normalises over dims (0, -1), i.e. over keys AND the batch, so sequences mix.
import math

import torch


def masked_self_attention(query, key, value, padding_mask=None):
    T = query.size(-2)
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    allowed = torch.ones(T, T, dtype=torch.bool, device=query.device).tril()[None, None]
    if padding_mask is not None:
        allowed = allowed & padding_mask[:, None, None, :].bool()
    e = torch.exp(scores.masked_fill(~allowed, float("-inf")) - scores.max())  # global max: fine for stability
    total = e.sum(dim=(0, -1), keepdim=True)  # should be dim=-1 only
    weights = e / torch.where(total > 0, total, torch.ones_like(total))
    return weights @ value, weights
