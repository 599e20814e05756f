# BUG: masked_fill(~mask, 0.0): masked scores become 0 instead of -inf, so masked keys keep weight exp(0 - max) / Z.
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, 0.0)
    return torch.softmax(scores, dim=-1) @ V
