"""Causal multi-head self-attention with given weights, as CS336 assignment 1's adapter asks for it:
`run_multihead_self_attention(d_model, num_heads, q_proj_weight, k_proj_weight, v_proj_weight, o_proj_weight,
in_features)`. Weights are [d_out, d_in], applied as `x @ W.T`; head h is rows h*d_head:(h+1)*d_head of W_Q, W_K, W_V
and the same columns of W_O; position i attends to j <= i; in_features [..., T, d_model], any batch dims.
"""

import math

import torch


def multihead_self_attention(d_model, num_heads, q_proj_weight, k_proj_weight, v_proj_weight, o_proj_weight,
                             in_features, scale: float | None = None):
    """(out [..., T, d_model],). `scale`: the scores' factor, 1/sqrt(d_head) unless given (the checks ask what a
    wrong scale would give)."""
    *lead, t, _ = in_features.shape
    hs = d_model // num_heads

    def split(w):
        return (in_features @ w.T).reshape(*lead, t, num_heads, hs).transpose(-3, -2)

    q, k, v = split(q_proj_weight), split(k_proj_weight), split(v_proj_weight)
    scores = q @ k.transpose(-2, -1) * (1 / math.sqrt(hs) if scale is None else scale)
    future = torch.ones(t, t, dtype=torch.bool, device=in_features.device).triu(1)
    y = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1) @ v
    return (y.transpose(-3, -2).reshape(*lead, t, d_model) @ o_proj_weight.T,)
