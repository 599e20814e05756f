# BUG: the band keeps j > i - window + 1, one key too few: window = 1 leaves a query no key at all (NaN).
import math

import torch


def sliding_window_attention(q, k, v, window):
    T = q.size(-2)
    i = torch.arange(T, device=q.device)[:, None]
    j = torch.arange(T, device=q.device)[None, :]
    allowed = (j <= i) & (j > i - window + 1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return weights @ v, weights
