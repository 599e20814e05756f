# BUG: the -inf fill is a full tensor made on the CPU (torch.full without device=): right on the CPU, a crash on a GPU.
# Expected: device_placement fails, nothing else.
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
    if mask is not None:
        scores = torch.where(mask, scores, torch.full(scores.shape, float("-inf"), dtype=scores.dtype))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
    return weights @ V
