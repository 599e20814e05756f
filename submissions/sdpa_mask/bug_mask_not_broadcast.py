# BUG: applies the mask per batch element with mask[b], assuming it carries the batch dim ([B, Tq, Tk] exactly): a
# mask shared over the batch ([Tq, Tk]) gives element b the mask's row b for every query (wrong keys hidden, masked
# keys visible), and raises once B > Tq; a [1, Tq, Tk] mask raises for B > 1.
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
    if mask is not None:
        scores = torch.stack([scores[b].masked_fill(~mask[b], float("-inf")) for b in range(scores.shape[0])])
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    return weights @ V
