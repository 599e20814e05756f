# BUG: mask.logical_not_() inverts the caller's mask in place: the output is right, but the mask comes back inverted
# (calling twice with the same mask gives the inverted answer the second time).
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
    if mask is not None:
        blocked = mask.logical_not_()
        scores = scores.masked_fill(blocked, float("-inf"))
        weights = torch.softmax(scores, dim=-1).masked_fill(blocked.all(dim=-1, keepdim=True), 0.0)
    else:
        weights = torch.softmax(scores, dim=-1)
    return weights @ V
