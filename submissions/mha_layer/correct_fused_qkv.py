# CORRECT: the handout's stretch goal: one matmul against torch.cat([W_q, W_k, W_v]) ([3 d_model, d_in]), chunked
# into q, k, v; a causal mask from an arange comparison; named multihead_self_attention.
import math

import torch


def multihead_self_attention(d_model, num_heads, q_proj_weight, k_proj_weight, v_proj_weight, o_proj_weight,
                             in_features):
    w_qkv = torch.cat([q_proj_weight, k_proj_weight, v_proj_weight], dim=0)
    qkv = in_features @ w_qkv.T
    *lead, T, _ = in_features.shape
    d_head = d_model // num_heads
    qkv = qkv.view(*lead, T, 3, num_heads, d_head).movedim(-3, 0).transpose(-3, -2)  # [3, ..., heads, T, d_head]
    q, k, v = qkv[0], qkv[1], qkv[2]
    pos = torch.arange(T, device=in_features.device)
    allowed = pos[None, :] <= pos[:, None]
    scores = torch.where(allowed, q @ k.transpose(-1, -2) / math.sqrt(d_head), float("-inf"))
    out = torch.softmax(scores, dim=-1) @ v
    return out.transpose(-3, -2).flatten(-2) @ o_proj_weight.T
