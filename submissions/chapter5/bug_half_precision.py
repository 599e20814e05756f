# BUG: computes in bfloat16 what came in as float32 (`.bfloat16()`, a habit from mixed-precision training) and casts
# the results back: the dtype is right, the precision is not (about 3 significant digits).
import math

import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    dtype, T = q.dtype, q.size(-2)
    q, k, v = q.bfloat16(), k.bfloat16(), v.bfloat16()
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if causal:
        scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return (weights @ v).to(dtype), weights.to(dtype)
