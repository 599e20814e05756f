# BUG: folds the 1/sqrt(d_head) scale into W_Q with `/=`, which on a tensor is in place: right output, but the
# caller's q_proj_weight is divided on every call.
import math

import torch


def run_multihead_self_attention(d_model, num_heads, q_proj_weight, k_proj_weight, v_proj_weight, o_proj_weight,
                                 in_features):
    *lead, T, _ = in_features.shape
    d_head = d_model // num_heads
    q_proj_weight /= math.sqrt(d_head)

    def split(w):
        return (in_features @ w.T).reshape(*lead, T, num_heads, d_head).transpose(-3, -2)

    q, k, v = split(q_proj_weight), split(k_proj_weight), split(v_proj_weight)
    future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=in_features.device), diagonal=1)
    weights = torch.softmax((q @ k.transpose(-2, -1)).masked_fill(future, float("-inf")), dim=-1)
    return (weights @ v).transpose(-3, -2).reshape(*lead, T, d_model) @ o_proj_weight.T
