# CORRECT: returns a NamedTuple; fully masked rows detected with any() and zeroed by multiplication.
import math
from typing import NamedTuple

import torch


class Attention(NamedTuple):
    hidden_states: torch.Tensor
    attention_weights: torch.Tensor


def masked_self_attention(query, key, value, padding_mask=None):
    T = query.size(2)
    scores = query @ key.transpose(2, 3) / math.sqrt(query.size(3))
    allowed = torch.ones(T, T, dtype=torch.bool, device=query.device).tril().view(1, 1, T, T)
    if padding_mask is not None:
        allowed = allowed & padding_mask.view(padding_mask.size(0), 1, 1, T).bool()
    has_key = allowed.any(-1, keepdim=True)
    scores = scores.masked_fill(~allowed, float("-inf")).masked_fill(~has_key, 0.0)  # no -inf-only rows
    weights = torch.softmax(scores, dim=-1) * has_key
    return Attention(weights @ value, weights)
