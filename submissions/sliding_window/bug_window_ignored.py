# BUG: takes `window` and never uses it: plain causal attention.
import math

import torch


def sliding_window_attention(q, k, v, window):
    T = q.size(-2)
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool, device=q.device))
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    weights = torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1)
    return weights @ v, weights
