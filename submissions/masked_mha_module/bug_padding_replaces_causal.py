# BUG: correct_course_level2.py with the padding mask replacing the causal mask when one is given, instead of
# joining it (allowed = padding alone): without a padding mask the layer is right; with one, every query sees the
# future.
import math
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn as nn
from torch import Tensor


@dataclass
class AttentionOutput:
    hidden_states: Tensor  # [B, T, D]
    attention_weights: Tensor  # [B, H, T, T]


def build_causal_mask(seq_len: int, device: torch.device | None = None) -> Tensor:
    """[T, T] bool, True = may attend."""
    return torch.ones(seq_len, seq_len, dtype=torch.bool, device=device).tril()


def masked_self_attention(query, key, value, padding_mask: Optional[Tensor] = None) -> AttentionOutput:
    d_k = query.shape[-1]
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)  # [B, H, T, T]

    seq_len = query.shape[2]
    causal = build_causal_mask(seq_len, scores.device)  # [T, T]
    allowed = causal[None, None, :, :]  # [1, 1, T, T]

    if padding_mask is not None:
        allowed = padding_mask[:, None, None, :].bool().expand(-1, 1, seq_len, -1)

    scores = scores.masked_fill(~allowed, float("-inf"))
    weights = scores.softmax(dim=-1)  # [B, H, T, T]
    weights = torch.where(allowed, weights, 0.0)  # a row that sees no key: zeros, not NaN
    context = weights @ value  # [B, H, T, Dv]

    return AttentionOutput(hidden_states=context, attention_weights=weights)


class MaskedSelfAttention(nn.Module):
    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.1):
        super().__init__()
        assert d_model % num_heads == 0
        self.num_heads, self.d_head = num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.o_proj = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def split(self, x: Tensor) -> Tensor:  # [B, T, D] -> [B, H, T, d_head]
        B, T, _ = x.shape
        return x.view(B, T, self.num_heads, self.d_head).transpose(1, 2)

    def forward(self, hidden_states: Tensor, padding_mask: Optional[Tensor] = None) -> AttentionOutput:
        B, T, D = hidden_states.shape
        q = self.split(self.q_proj(hidden_states))
        k = self.split(self.k_proj(hidden_states))
        v = self.split(self.v_proj(hidden_states))
        attn = masked_self_attention(q, k, v, padding_mask)
        context = attn.hidden_states.transpose(1, 2).reshape(B, T, D)  # heads merged
        return AttentionOutput(hidden_states=self.dropout(self.o_proj(context)),
                               attention_weights=attn.attention_weights)
