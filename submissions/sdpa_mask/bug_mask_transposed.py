# BUG: uses mask.transpose(-2, -1), reading the mask as [keys, queries]: query i sees the keys j with mask[j, i]
# (for a causal mask: the future instead of the past); raises when Tq != Tk.
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask.transpose(-2, -1), float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    return weights @ V
