# BUG: softmax over dim=-2 (the queries) instead of dim=-1 (the keys).
import math

import torch


def sliding_window_attention(q, k, v, window):
    T = q.size(-2)
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    allowed = ones.tril() & ~ones.tril(-window)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-2)
    return weights @ v, weights
