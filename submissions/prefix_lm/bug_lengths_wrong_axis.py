# BUG: reshapes the [B] lengths to [B, 1, 1], right for [B, T, H] inputs; for [B, heads, T, H] the batch then lines
# up with the heads (or the shapes clash).
import math

import torch


def prefix_lm_attention(q, k, v, prefix_len):
    T = q.size(-2)
    j = torch.arange(T, device=q.device)
    if torch.is_tensor(prefix_len):
        prefix_len = prefix_len.to(q.device)[:, None, None]
    allowed = (j[None, :] <= j[:, None]) | (j < prefix_len)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return weights @ v, weights
