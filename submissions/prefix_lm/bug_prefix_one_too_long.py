# BUG: j <= prefix_len instead of j < prefix_len: key prefix_len, the first generated token, is seen by every query.
import math

import torch


def prefix_lm_attention(q, k, v, prefix_len):
    T = q.size(-2)
    j = torch.arange(T, device=q.device)
    if torch.is_tensor(prefix_len):
        prefix_len = prefix_len.to(q.device).view(-1, *([1] * (q.dim() - 1)))
    allowed = (j[None, :] <= j[:, None]) | (j <= prefix_len)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return weights @ v, weights
