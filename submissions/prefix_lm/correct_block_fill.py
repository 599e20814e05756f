# CORRECT: a causal mask per batch row with the prompt block [:p, :p] switched on, finfo.min as the fill and the
# hidden weights zeroed after the softmax; returns a NamedTuple.
from typing import NamedTuple

import torch


class Result(NamedTuple):
    context: torch.Tensor
    attention_weights: torch.Tensor


def prefix_lm_attention(q, k, v, prefix_len):
    B, T, H = q.size(0), q.size(-2), q.size(-1)
    lengths = prefix_len.tolist() if torch.is_tensor(prefix_len) else [prefix_len] * B
    allowed = torch.ones(T, T, dtype=torch.bool, device=q.device).tril().repeat(B, 1, 1)
    for b, p in enumerate(lengths):
        allowed[b, :p, :p] = True
    if q.dim() == 4:
        allowed = allowed.unsqueeze(1)
    scores = torch.matmul(q, k.transpose(-1, -2)) * H**-0.5
    scores = torch.where(allowed, scores, torch.finfo(q.dtype).min)
    weights = torch.softmax(scores, dim=-1) * allowed
    return Result(weights @ v, weights)
