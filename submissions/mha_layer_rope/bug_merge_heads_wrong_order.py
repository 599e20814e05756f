# BUG: correct_interleaved.py with one change: heads merged as [d_head, heads] after an [heads, d_head] split; right only with one head.
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

    q, k, v = split(q_proj_weight), split(k_proj_weight), split(v_proj_weight)
    q, k = rope(q, positions, theta), rope(k, positions, theta)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_head)
    future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=in_features.device), diagonal=1)
    out = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1) @ v
    return out.transpose(-3, -2).transpose(-2, -1).reshape(*lead, T, d_model) @ o_proj_weight.T
