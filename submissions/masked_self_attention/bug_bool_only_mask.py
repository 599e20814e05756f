# BUG: assumes a bool mask: ~padding_mask on the text's 1/0 LongTensor is bitwise not (-2/-1), and masked_fill rejects it.
import math

import torch


def masked_self_attention(query, key, value, padding_mask=None):
    T = query.size(-2)
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool, device=query.device).triu(1), float("-inf"))
    if padding_mask is not None:
        scores = scores.masked_fill(~padding_mask[:, None, None, :], float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ value, weights
