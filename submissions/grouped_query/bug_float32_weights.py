# BUG: softmax in float32 (a habit from float16 training), the output cast back but the weights returned in float32.
import math

import torch


def grouped_query_attention(q, k, v):
    group = q.size(1) // k.size(1)
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    T = q.size(-2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=q.device), diagonal=1)
    weights = torch.softmax(scores.masked_fill(future, float("-inf")).float(), dim=-1)
    return (weights @ v.float()).to(q.dtype), weights
