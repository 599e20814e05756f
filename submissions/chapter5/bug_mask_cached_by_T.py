# BUG: caches the mask in a dict keyed by T only: the first call's device wins, so after a CPU call with the same T
# a call on another device (a GPU) meets a CPU mask. Right on any one device.
import math

import torch

_MASKS = {}


def scaled_dot_product_attention(q, k, v, causal=True):
    T = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        if T not in _MASKS:
            _MASKS[T] = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~_MASKS[T], float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
