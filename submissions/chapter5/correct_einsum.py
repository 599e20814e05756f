# CORRECT: causal attention written with einsum (function name `attention`).
import math

import torch


def attention(q, k, v, causal: bool = True):
    T, H = q.shape[-2], q.shape[-1]
    scores = torch.einsum("...ih,...jh->...ij", q, k) / math.sqrt(H)
    if causal:
        allowed = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~allowed, float("-inf"))
    weights = scores.softmax(dim=-1)
    out = torch.einsum("...ij,...jh->...ih", weights, v)
    return out, weights
