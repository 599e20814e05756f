# CORRECT: turns the bool mask (True = may attend) into an additive float bias (0 where allowed, -inf elsewhere),
# adds it to the scores, and zeroes the NaN rows of queries that may attend to no key.
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
    if mask is not None:
        bias = torch.zeros(mask.shape, dtype=scores.dtype, device=scores.device)
        bias = bias.masked_fill(~mask, float("-inf"))
        scores = scores + bias
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    return weights @ V
