# CORRECT: additive float mask (0 / finfo.min), then multiplies by the 0/1 mask so fully masked rows are 0.
import math

import torch


def masked_self_attention(query, key, value, padding_mask=None):
    T = query.size(-2)
    keep = torch.ones(T, T, device=query.device, dtype=query.dtype).tril()[None, None]  # 1 = attend
    if padding_mask is not None:
        keep = keep * padding_mask[:, None, None, :].to(query.dtype)
    bias = (1.0 - keep) * torch.finfo(query.dtype).min
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1)) + bias
    weights = torch.softmax(scores, dim=-1) * keep
    return {"context": weights @ value, "attn_weights": weights}
