# BUG: the causal mask is built without device=..., so it lives on the CPU and breaks for inputs on a GPU.
import math

import torch


def grouped_query_attention(q, k, v):
    group = q.size(1) // k.size(1)
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    T = q.size(-2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    mask = torch.tril(torch.ones(T, T))
    weights = torch.softmax(scores.masked_fill(mask == 0, float("-inf")), dim=-1)
    return weights @ v, weights
