# CORRECT: einsum, a bool key mask broadcast as [B, 1, 1, T], rows without any key zeroed via masked_fill.
import math

import torch


def masked_self_attention(query, key, value, padding_mask=None):
    T = query.shape[-2]
    scores = torch.einsum("bhid,bhjd->bhij", query, key) / math.sqrt(query.shape[-1])
    future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=query.device), diagonal=1)
    hidden = future[None, None]
    if padding_mask is not None:
        hidden = hidden | ~padding_mask.to(torch.bool)[:, None, None, :]
    weights = scores.masked_fill(hidden, float("-inf")).softmax(-1)
    weights = weights.masked_fill(hidden, 0.0)  # NaN rows are hidden everywhere, so they become 0 too
    return {"output": torch.einsum("bhij,bhjd->bhid", weights, value), "weights": weights}
