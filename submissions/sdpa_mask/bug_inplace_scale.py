# BUG: scales Q in place (Q /= sqrt(d_k)): the output is right, the caller's Q is changed.
# Expected: inputs_unchanged fails, nothing else.
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q /= math.sqrt(Q.size(-1))
    scores = Q @ K.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
    return weights @ V
