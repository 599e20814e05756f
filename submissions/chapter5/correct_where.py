# CORRECT: causal attention using torch.where to apply the mask.
import math

import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    T, H = q.size(-2), q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(H)
    if causal:
        i = torch.arange(T, device=q.device)
        allowed = i[None, :] <= i[:, None]  # key j allowed for query i iff j <= i
        neg_inf = torch.tensor(float("-inf"), dtype=scores.dtype, device=scores.device)
        scores = torch.where(allowed, scores, neg_inf)
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
