"""Causal multi-head self-attention as a layer (issue 32's `mha_module`): `multihead_attention(x, w_q, w_k, w_v, w_o,
b_q, b_k, b_v, b_o, heads=)` is the function every submitted class is compared with, and `CausalSelfAttention` the
same as an nn.Module class, the way a student hands it in (the grader's example plan is recorded by grading it).

Projections are `x @ W.T + b` (torch's Linear), W [d, d]; head h is rows h*d_head:(h+1)*d_head of W_Q, W_K, W_V and
the same columns of W_O; scores `q_h k_h^T / sqrt(d_head)` over the keys j <= i; heads concatenated in order, then
the output projection. A layer without an output projection (Raschka's CausalAttention) is `w_o=None`; a missing
bias is None.
"""

import math

import torch
import torch.nn as nn


def multihead_attention(x, w_q, w_k, w_v, w_o=None, b_q=None, b_k=None, b_v=None, b_o=None, heads: int = 1,
                        scale: float | None = None, **options):
    """x [B, T, d] -> (out [B, T, d],). `scale`: the scores' factor (1/sqrt(d_head) unless given: the checks ask
    what a wrong scale would give). Options of the layer's build (context, dropout, train) change nothing here."""
    b, t, d = x.shape
    hs = d // heads
    split = lambda w, bias: torch.nn.functional.linear(x, w, bias).view(b, t, heads, hs).transpose(1, 2)  # noqa: E731
    q, k, v = split(w_q, b_q), split(w_k, b_k), split(w_v, b_v)
    scores = q @ k.transpose(-2, -1) * (1 / math.sqrt(hs) if scale is None else scale)
    future = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
    y = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1) @ v
    y = y.transpose(1, 2).reshape(b, t, d)
    return (y if w_o is None else torch.nn.functional.linear(y, w_o, b_o),)


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True):
        super().__init__()
        assert d_model % num_heads == 0
        self.num_heads = num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.o_proj = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = dropout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        hs = d // self.num_heads
        q, k, v = (p(x).view(b, t, self.num_heads, hs).transpose(1, 2) for p in (self.q_proj, self.k_proj, self.v_proj))
        future = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
        w = torch.softmax((q @ k.transpose(-2, -1) / math.sqrt(hs)).masked_fill(future, float("-inf")), dim=-1)
        w = torch.nn.functional.dropout(w, self.dropout, self.training)
        return self.o_proj((w @ v).transpose(1, 2).reshape(b, t, d))
