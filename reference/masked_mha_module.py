"""The decoder's masked self-attention layer (the course text's Level 2): hidden_states [B, T, D] and the batch's
padding mask [B, T] (1 = real token) in, hidden_states [B, T, D] and attention_weights [B, H, T, T] out, the causal
mask and the padding mask combined as [1, 1, T, T] & [B, 1, 1, T]. `masked_multihead_attention(x, w_q, ..., b_o,
heads=, padding_mask=)` is the function every submitted class is compared with, and `MaskedSelfAttention` the same as
an nn.Module class, the way a student hands it in (the grader's example plan is recorded by grading it).

As reference.mha_module: projections `x @ W.T + b`, head h the rows h*d_head:(h+1)*d_head of W_Q, W_K, W_V (and the
same columns of W_O), scores `q_h k_h^T / sqrt(d_head)`. A query that may attend to no key (a pad at the start of a
left-padded sequence) gets zero weights, where a plain softmax gives 0/0 = NaN: its output is the output bias.
"""

import math
from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass
class AttentionOutput:
    hidden_states: torch.Tensor  # [B, T, D]
    attention_weights: torch.Tensor  # [B, H, T, T]


def attend(q, k, v, padding_mask=None, scale=None):
    """q, k, v [B, H, T, d_head] -> (y [B, H, T, d_head], weights [B, H, T, T]) under the causal and padding masks."""
    t = q.size(-2)
    allowed = torch.ones(t, t, dtype=torch.bool, device=q.device).tril()[None, None]  # [1, 1, T, T]
    if padding_mask is not None:
        allowed = allowed & padding_mask[:, None, None, :].bool()  # [B, 1, 1, T]: masks keys, not queries
    scores = q @ k.transpose(-2, -1) * (1 / math.sqrt(q.size(-1)) if scale is None else scale)
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    weights = torch.where(allowed, weights, 0.0)  # exact zeros; a row that sees no key is 0 instead of NaN
    return weights @ v, weights


def masked_multihead_attention(x, w_q, w_k, w_v, w_o=None, b_q=None, b_k=None, b_v=None, b_o=None, heads: int = 1,
                               padding_mask=None, scale: float | None = None, **options):
    """x [B, T, d] -> (out [B, T, d], weights [B, H, T, T]). `scale`: the scores' factor (1/sqrt(d_head) unless
    given). Options of the layer's build (context, dropout, train) change nothing here."""
    b, t, d = x.shape
    hs = d // heads
    split = lambda w, bias: torch.nn.functional.linear(x, w, bias).view(b, t, heads, hs).transpose(1, 2)  # noqa: E731
    y, weights = attend(split(w_q, b_q), split(w_k, b_k), split(w_v, b_v), padding_mask, scale)
    y = y.transpose(1, 2).reshape(b, t, d)
    return (y if w_o is None else torch.nn.functional.linear(y, w_o, b_o)), weights


class MaskedSelfAttention(nn.Module):
    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True):
        super().__init__()
        assert d_model % num_heads == 0
        self.num_heads = num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.o_proj = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, hidden_states: torch.Tensor, padding_mask: torch.Tensor | None = None) -> AttentionOutput:
        b, t, d = hidden_states.shape
        hs = d // self.num_heads
        q, k, v = (p(hidden_states).view(b, t, self.num_heads, hs).transpose(1, 2)
                   for p in (self.q_proj, self.k_proj, self.v_proj))
        y, weights = attend(q, k, v, padding_mask)
        y = self.dropout(y).transpose(1, 2).reshape(b, t, d)
        return AttentionOutput(hidden_states=self.o_proj(y), attention_weights=weights)
