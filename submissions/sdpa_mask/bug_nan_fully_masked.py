# BUG: the textbook version (masked_fill(~mask, -inf), softmax): right on every row that may attend to some key, but a
# query whose mask allows no key gets NaN, where the rubric asks for zeros (what torch's SDPA returns on 2.13).
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V
