# CORRECT: torch.where before and after the softmax; the second where also turns NaN rows into zeros.
import math

import torch


def masked_self_attention(query, key, value, padding_mask=None):
    T = query.size(-2)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.size(-1))
    pos = torch.arange(T, device=query.device)
    allowed = pos[None, :] <= pos[:, None]  # [T, T]: key j <= query i
    if padding_mask is not None:
        allowed = allowed & (padding_mask != 0)[:, None, None, :]
    weights = torch.softmax(torch.where(allowed, scores, float("-inf")), dim=-1)
    weights = torch.where(allowed, weights, torch.zeros_like(weights))
    return {"hidden_states": weights @ value, "attention_weights": weights}
