# BUG: takes T from q.shape[1]: right for [B, T, H], but for [B, heads, T, H] that is the number of heads, so the
# mask has the wrong size (with one head: no mask at all; with two heads and T=1: a shape error).
import math

import torch


def scaled_dot_product_attention(q, k, v, causal=True):
    T = q.shape[1]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        scores = scores.masked_fill(torch.tril(torch.ones(T, T, device=q.device)) == 0, float("-inf"))
    weights = scores.softmax(-1)
    return weights @ v, weights
