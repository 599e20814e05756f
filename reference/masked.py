"""Masked self-attention reference (the decoder's first sub-layer): causal mask and key padding mask combined."""

import math
from dataclasses import dataclass

import torch


@dataclass
class AttentionOutput:
    hidden_states: torch.Tensor  # [B, heads, T, Dv]
    attention_weights: torch.Tensor  # [B, heads, T, T]


def masked_self_attention(query, key, value, padding_mask=None) -> AttentionOutput:
    """query, key: [B, heads, T, Dk], value: [B, heads, T, Dv], padding_mask: [B, T] (1 = real token, 0 = pad).

    Query i attends to key j when j <= i and key j is a real token. A query with no such key (a pad at the start
    of a left-padded sequence) gets zero weights and a zero output, where a plain softmax would give 0/0 = NaN.
    """
    t = query.size(-2)
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))  # [B, heads, T, T]
    allowed = torch.ones(t, t, dtype=torch.bool, device=query.device).tril()[None, None]  # [1, 1, T, T]
    if padding_mask is not None:
        allowed = allowed & padding_mask[:, None, None, :].bool()  # [B, 1, T, T]: masks keys, not queries
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    weights = torch.where(allowed, weights, 0.0)  # exact zeros; fully masked rows become 0 instead of NaN
    return AttentionOutput(hidden_states=weights @ value, attention_weights=weights)
