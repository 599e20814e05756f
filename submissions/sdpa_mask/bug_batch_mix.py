# BUG: the softmax normalises over the keys and the leading batch dim together (dim=(0, -1)), so batch elements mix.
# Expected: batch_independence and the checks that compare rows (weights_sum_to_one, reference_match, ...) fail.
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    e = (scores - scores.amax(dim=(0, -1), keepdim=True)).exp()
    weights = e / e.sum(dim=(0, -1), keepdim=True)
    if mask is not None:
        weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
    return weights @ V
