# BUG: adds the bool mask to the scores as if it were an additive float mask: True becomes +1 and False +0, so
# nothing is masked (allowed keys only get a bonus of 1).
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
    if mask is not None:
        scores = scores + mask
    return torch.softmax(scores, dim=-1) @ V
