# CORRECT: hand-written softmax over the visible keys; the row max is taken over visible keys only.
import math
from dataclasses import dataclass

import torch


@dataclass
class Out:
    hidden_states: torch.Tensor
    attention_weights: torch.Tensor


def masked_self_attention(query, key, value, padding_mask=None):
    T = query.size(-2)
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    allowed = torch.ones(T, T, dtype=torch.bool, device=query.device).tril()[None, None]
    if padding_mask is not None:
        allowed = allowed & (padding_mask[:, None, None, :] == 1)
    s = scores.masked_fill(~allowed, float("-inf"))
    m = s.amax(-1, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))  # rows that see nothing: exp(-inf - 0) = 0
    e = torch.exp(s - m)
    total = e.sum(-1, keepdim=True)
    weights = e / torch.where(total > 0, total, torch.ones_like(total))
    return Out(weights @ value, weights)
