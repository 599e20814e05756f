# BUG: masked_fill(~mask, -1e9) (the Annotated Transformer's fill): right on every row that may attend to some key,
# but a query whose mask allows no key spreads its weight uniformly and returns the mean of V instead of zeros.
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    return torch.softmax(scores, dim=-1) @ V
