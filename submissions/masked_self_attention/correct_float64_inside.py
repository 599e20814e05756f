# CORRECT: computes in float64 with a -1e9 fill, zeroes masked weights, casts back to the input dtype.
import math

import torch


def masked_self_attention(query, key, value, padding_mask=None):
    q, k, v = query.double(), key.double(), value.double()
    T = q.size(-2)
    allowed = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()[None, None]
    if padding_mask is not None:
        allowed = allowed & padding_mask[:, None, None, :].bool()
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))).masked_fill(~allowed, -1e9)
    weights = torch.softmax(scores, dim=-1).masked_fill(~allowed, 0.0)  # -1e9 rows were uniform: now 0
    return (weights @ v).to(query.dtype), weights.to(query.dtype)
