# BUG: applies the prefix to the queries (a column [T, 1] instead of a row of keys): a prompt token sees the whole
# sequence, the generated part included.
import math

import torch


def prefix_lm_attention(q, k, v, prefix_len):
    T = q.size(-2)
    i = torch.arange(T, device=q.device)[:, None]
    j = torch.arange(T, device=q.device)[None, :]
    if torch.is_tensor(prefix_len):
        prefix_len = prefix_len.to(q.device).view(-1, *([1] * (q.dim() - 1)))
    allowed = (j <= i) | (i < prefix_len)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return weights @ v, weights
