# BUG: scores divided by sqrt(384), a model's d_model copied from a config, instead of sqrt(q.size(-1)): a fixed
# size whatever the head size is.
import math

import torch

D_MODEL = 384


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    T = q.size(-2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(D_MODEL)
    if causal:
        scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
