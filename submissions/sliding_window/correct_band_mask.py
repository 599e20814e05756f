# CORRECT: a boolean band mask, tril for the future and ~tril(-window) for the keys that fell out of the window.
import math

import torch


def sliding_window_attention(q, k, v, window):
    T, H = q.size(-2), q.size(-1)
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    allowed = ones.tril() & ~ones.tril(-window)  # i - window < j <= i
    scores = q @ k.transpose(-2, -1) / math.sqrt(H)
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return weights @ v, weights
