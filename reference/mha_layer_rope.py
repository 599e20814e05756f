"""Causal multi-head self-attention with RoPE and given weights, as CS336 assignment 1's adapter asks for it:
`run_multihead_self_attention_with_rope(d_model, num_heads, max_seq_len, theta, q_proj_weight, k_proj_weight,
v_proj_weight, o_proj_weight, in_features, token_positions=None)`. As mha_layer, with each head's q and k (not v)
rotated in CS336's convention: pairs (x[2k], x[2k+1]) of the head dim turned by position / theta^(2k/d_head),
positions from token_positions [..., T] (the same for every head) or arange(T).
"""

import math

import torch


def rope(x: torch.Tensor, positions: torch.Tensor, theta: float, pairs: str = "interleaved", exponent: float = 2.0):
    """x [..., T, d] rotated by positions [..., T]. `pairs`/`exponent`: the conventions a mistake uses instead
    ("half": rotate-half; exponent 1: theta^(k/d)), for the checks' words."""
    d = x.shape[-1]
    inv = theta ** (-exponent * torch.arange(d // 2, dtype=torch.float64) / d)
    angle = positions.to(torch.float64)[..., None] * inv.to(positions.device)
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    if pairs == "half":
        a, b = x[..., : d // 2], x[..., d // 2:]
        return torch.cat([a * cos - b * sin, a * sin + b * cos], -1)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, a * sin + b * cos], -1).flatten(-2)


def rope_attention(d_model, num_heads, q_proj_weight, k_proj_weight, v_proj_weight, o_proj_weight, in_features,
                   max_seq_len=None, theta=10000.0, token_positions=None, scale: float | None = None,
                   pairs: str = "interleaved", exponent: float = 2.0):
    """(out [..., T, d_model],), in the checks' order of arguments (mha_layer's; the exercise binds them to CS336's)."""
    *lead, t, _ = in_features.shape
    hs = d_model // num_heads
    if token_positions is None:
        token_positions = torch.arange(t, device=in_features.device)
    positions = token_positions.unsqueeze(-2)  # [..., 1, T]: every head

    def split(w):
        return (in_features @ w.T).reshape(*lead, t, num_heads, hs).transpose(-3, -2)

    q, k, v = split(q_proj_weight), split(k_proj_weight), split(v_proj_weight)
    q, k = rope(q, positions, theta, pairs, exponent), rope(k, positions, theta, pairs, exponent)
    scores = q @ k.transpose(-2, -1) * (1 / math.sqrt(hs) if scale is None else scale)
    future = torch.ones(t, t, dtype=torch.bool, device=in_features.device).triu(1)
    y = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1) @ v
    return (y.transpose(-3, -2).reshape(*lead, t, d_model) @ o_proj_weight.T,)


def run_multihead_self_attention_with_rope(d_model, num_heads, max_seq_len, theta, q_proj_weight, k_proj_weight,
                                           v_proj_weight, o_proj_weight, in_features, token_positions=None):
    """CS336's adapter: the reference as a submission (the example plan is recorded by grading it)."""
    return rope_attention(d_model, num_heads, q_proj_weight, k_proj_weight, v_proj_weight, o_proj_weight, in_features,
                          max_seq_len, theta, token_positions)
