# BUG: accepts mask and never uses it: every query attends to every key.
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
    return torch.softmax(scores, dim=-1) @ V
