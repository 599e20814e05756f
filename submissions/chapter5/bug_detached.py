# BUG: detaches the weights (e.g. to save memory), so no gradient reaches q and k.
import math

import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if causal:
        t = q.size(-2)
        mask = torch.tril(torch.ones(t, t, dtype=torch.bool, device=q.device))
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).detach()
    return weights @ v, weights
