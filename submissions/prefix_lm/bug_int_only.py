# BUG: handles prefix_len only as an int: a [B] tensor of lengths meets torch.arange(T) on the wrong axis.
import math

import torch


def prefix_lm_attention(q, k, v, prefix_len):
    T = q.size(-2)
    j = torch.arange(T, device=q.device)
    prompt = j < prefix_len
    allowed = torch.tril(torch.ones(T, T, dtype=torch.bool, device=q.device)) | prompt
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return weights @ v, weights
