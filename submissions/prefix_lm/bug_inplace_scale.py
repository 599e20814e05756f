# BUG: scales q in place with q.mul_(), silently modifying the caller's tensor (the output itself is right).
import math

import torch


def prefix_lm_attention(q, k, v, prefix_len):
    T = q.size(-2)
    q.mul_(1 / math.sqrt(q.size(-1)))
    j = torch.arange(T, device=q.device)
    if torch.is_tensor(prefix_len):
        prefix_len = prefix_len.to(q.device).view(-1, *([1] * (q.dim() - 1)))
    allowed = (j[None, :] <= j[:, None]) | (j < prefix_len)
    weights = torch.softmax((q @ k.transpose(-2, -1)).masked_fill(~allowed, float("-inf")), dim=-1)
    return weights @ v, weights
