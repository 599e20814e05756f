# BUG: applies RoPE over the full d_model before splitting into heads (the handout: the RoPE dimension must be the
# head dimension): pair k of head h rotates at theta^(-2(h*d_head/2 + k)/d_model) instead of theta^(-2k/d_head), wrong
# for every pair but the first one of head 0; right only when heads == 1.
import math

import torch


def rope(x, positions, theta):
    d = x.shape[-1]
    inv_freq = theta ** (-torch.arange(0, d, 2, device=x.device, dtype=x.dtype) / d)
    angle = positions.to(x.dtype)[..., None] * inv_freq  # [..., T, d/2]
    cos, sin = angle.cos(), angle.sin()
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)


def run_multihead_self_attention_with_rope(d_model, num_heads, max_seq_len, theta, q_proj_weight, k_proj_weight,
                                           v_proj_weight, o_proj_weight, in_features, token_positions=None):
    *lead, T, _ = in_features.shape
    d_head = d_model // num_heads
    if token_positions is None:
        token_positions = torch.arange(T, device=in_features.device)
    positions = token_positions.unsqueeze(-2)  # [..., 1, T]: the same rotation for every head

    def split(w):
        return (in_features @ w.T).reshape(*lead, T, num_heads, d_head).transpose(-3, -2)

    q = rope(in_features @ q_proj_weight.T, token_positions, theta)  # over all d_model features
    k = rope(in_features @ k_proj_weight.T, token_positions, theta)
    q = q.reshape(*lead, T, num_heads, d_head).transpose(-3, -2)
    k = k.reshape(*lead, T, num_heads, d_head).transpose(-3, -2)
    v = split(v_proj_weight)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_head)
    future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=in_features.device), diagonal=1)
    out = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1) @ v
    return out.transpose(-3, -2).reshape(*lead, T, d_model) @ o_proj_weight.T
