# BUG: masked_fill(mask, -inf): reads True as "masked out" (nn.MultiheadAttention's key_padding_mask convention), so
# every query attends exactly to the keys it must not see. Correct under a rubric whose convention is bool True =
# masked.
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(mask.all(dim=-1, keepdim=True), 0.0)
    return weights @ V
