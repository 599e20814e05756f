# CORRECT: torch.where(mask, scores, finfo.min), softmax, then weights * mask: masked weights are exactly 0 and a
# query that may attend to no key (whose softmax is uniform) gets zeros.
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = torch.matmul(Q, K.transpose(-1, -2)) * (1.0 / math.sqrt(K.shape[-1]))
    if mask is None:
        return torch.softmax(scores, dim=-1) @ V
    lowest = torch.tensor(torch.finfo(scores.dtype).min, dtype=scores.dtype, device=scores.device)
    scores = torch.where(mask, scores, lowest)
    weights = torch.softmax(scores, dim=-1) * mask
    return weights @ V
