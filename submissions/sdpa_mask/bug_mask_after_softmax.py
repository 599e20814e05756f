# BUG: softmax over all keys, then multiplies by the mask without renormalising: masked weights are 0 but each row
# sums to less than 1 (the masked keys' scores still shrink the allowed weights).
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask
    return weights @ V
