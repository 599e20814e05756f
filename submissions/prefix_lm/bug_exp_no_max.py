# BUG: hand-written softmax exp(s) / sum(exp(s)) without subtracting the row max: overflows (inf/inf = NaN) for large scores.
import math

import torch


def prefix_lm_attention(q, k, v, prefix_len):
    T = q.size(-2)
    j = torch.arange(T, device=q.device)
    if torch.is_tensor(prefix_len):
        prefix_len = prefix_len.to(q.device).view(-1, *([1] * (q.dim() - 1)))
    allowed = (j[None, :] <= j[:, None]) | (j < prefix_len)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    e = torch.exp(scores.masked_fill(~allowed, float("-inf")))
    weights = e / e.sum(dim=-1, keepdim=True)
    return weights @ v, weights
