# BUG: the course text's own minimal version: a query that sees only padding gets softmax(all -inf) = NaN.
import math
from dataclasses import dataclass
from typing import Optional

import torch
from torch import Tensor


@dataclass
class AttentionOutput:
    hidden_states: Tensor  # [B, T, D]
    attention_weights: Tensor  # [B, H, T, T]


def build_causal_mask(seq_len: int, device: torch.device | None = None) -> Tensor:
    return torch.ones(seq_len, seq_len, dtype=torch.bool, device=device).tril()


def masked_self_attention(query: Tensor, key: Tensor, value: Tensor, padding_mask: Optional[Tensor] = None) -> AttentionOutput:
    d_k = query.shape[-1]
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)  # [B, H, T, T]

    seq_len = query.shape[2]
    causal = build_causal_mask(seq_len, scores.device)  # [T, T]
    allowed = causal[None, None, :, :]  # [1, 1, T, T]

    if padding_mask is not None:
        allowed = allowed & padding_mask[:, None, None, :].bool()

    scores = scores.masked_fill(~allowed, float("-inf"))
    weights = scores.softmax(dim=-1)  # [B, H, T, T]
    context = weights @ value  # [B, H, T, Dv]

    return AttentionOutput(hidden_states=context, attention_weights=weights)
