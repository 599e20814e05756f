# BUG: scales q in place with q.mul_(), silently modifying the caller's tensor (the output itself is right).
import math

import torch


def sliding_window_attention(q, k, v, window):
    T = q.size(-2)
    q.mul_(1 / math.sqrt(q.size(-1)))
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    allowed = ones.tril() & ~ones.tril(-window)
    weights = torch.softmax((q @ k.transpose(-2, -1)).masked_fill(~allowed, float("-inf")), dim=-1)
    return weights @ v, weights
