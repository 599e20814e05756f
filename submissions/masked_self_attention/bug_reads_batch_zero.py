# BUG: every sequence of the batch attends to the keys and values of sequence 0 (key[:1], value[:1] broadcast over
# the batch): sequence 0 is right and nothing of the others reaches it, yet every other sequence is wrong.
import math

import torch


def masked_self_attention(query, key, value, padding_mask=None):
    T = query.size(-2)
    key, value = key[:1], value[:1]
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.size(-1))
    pos = torch.arange(T, device=query.device)
    allowed = pos[None, :] <= pos[:, None]  # [T, T]: key j <= query i
    if padding_mask is not None:
        allowed = allowed & (padding_mask != 0)[:, None, None, :]
    weights = torch.softmax(torch.where(allowed, scores, float("-inf")), dim=-1)
    weights = torch.where(allowed, weights, torch.zeros_like(weights))
    return weights @ value, weights
