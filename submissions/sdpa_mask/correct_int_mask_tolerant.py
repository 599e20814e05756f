# CORRECT: masked_fill(mask == 0, -inf) (the Annotated Transformer's test), so a bool mask (True = may attend) and a
# 1/0 integer mask both work; softmax via logsumexp; rows with no key allowed set to 0 with nan_to_num.
import math

import torch


def run_scaled_dot_product_attention(Q, K, V, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", Q, K) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    weights = torch.exp(scores - torch.logsumexp(scores, dim=-1, keepdim=True))
    weights = torch.nan_to_num(weights, nan=0.0)
    return torch.einsum("...qk,...kd->...qd", weights, V)
