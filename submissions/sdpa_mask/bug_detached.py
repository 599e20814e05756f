# BUG: detaches the scores (a numpy round trip's effect): the output is right, no gradient reaches Q and K.
# Expected: gradients fails, nothing else.
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = (Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))).detach()
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
    return weights @ V
