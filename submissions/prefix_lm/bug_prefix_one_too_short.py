# BUG: takes the index of the last prompt token (prefix_len - 1) and then compares with < instead of <=: the last
# prompt token is hidden from the prompt tokens before it.
import math

import torch


def prefix_lm_attention(q, k, v, prefix_len):
    T = q.size(-2)
    j = torch.arange(T, device=q.device)
    if torch.is_tensor(prefix_len):
        prefix_len = prefix_len.to(q.device).view(-1, *([1] * (q.dim() - 1)))
    last = prefix_len - 1
    allowed = (j[None, :] <= j[:, None]) | (j < last)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return weights @ v, weights
