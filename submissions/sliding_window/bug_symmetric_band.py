# BUG: a symmetric band |i - j| < window (local attention as in Longformer) without the causal half: each query also
# sees the next window - 1 keys of the future.
import math

import torch


def sliding_window_attention(q, k, v, window):
    T = q.size(-2)
    pos = torch.arange(T, device=q.device)
    allowed = (pos[:, None] - pos[None, :]).abs() < window
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return weights @ v, weights
