# BUG: fills the scores outside the band with 0 instead of -inf, so those keys keep weight exp(0 - max).
import math

import torch


def sliding_window_attention(q, k, v, window):
    T = q.size(-2)
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    allowed = ones.tril() & ~ones.tril(-window)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    weights = torch.softmax(scores.masked_fill(~allowed, 0.0), dim=-1)
    return weights @ v, weights
