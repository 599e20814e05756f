# BUG: casts the inputs to float32, so float64 inputs come back as float32 (dtype not preserved).
import math

import torch


def sliding_window_attention(q, k, v, window):
    q, k, v = q.float(), k.float(), v.float()
    T = q.size(-2)
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    allowed = ones.tril() & ~ones.tril(-window)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return weights @ v, weights
