# BUG: the band is built without device=..., so it lives on the CPU and breaks for inputs on a GPU.
import math

import torch


def sliding_window_attention(q, k, v, window):
    T = q.size(-2)
    pos = torch.arange(T)
    behind = pos[:, None] - pos[None, :]
    allowed = (behind >= 0) & (behind < window)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return weights @ v, weights
