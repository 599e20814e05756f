# BUG: detaches the weights (e.g. to save memory), so no gradient reaches q and k.
import math

import torch


def sliding_window_attention(q, k, v, window):
    T = q.size(-2)
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    allowed = ones.tril() & ~ones.tril(-window)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1).detach()
    return weights @ v, weights
