# BUG: assumes every prompt of the batch has the same length and takes the first one: prefix_len[0] for every row.
import math

import torch


def prefix_lm_attention(q, k, v, prefix_len):
    if torch.is_tensor(prefix_len):
        prefix_len = int(prefix_len.reshape(-1)[0])
    T = q.size(-2)
    j = torch.arange(T, device=q.device)
    allowed = (j[None, :] <= j[:, None]) | (j < prefix_len)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return weights @ v, weights
