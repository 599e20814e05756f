# BUG: the output is right, and the weights returned beside it are [..., T, heads, T] (transposed with the heads
# like the output before the merge) instead of [..., heads, T, T]: weights_shape fails, and the weights' other checks
# are skipped; the output's checks all pass.
import math

import torch


def run_multihead_self_attention(d_model, num_heads, q_proj_weight, k_proj_weight, v_proj_weight, o_proj_weight,
                                 in_features):
    *lead, T, _ = in_features.shape
    d_head = d_model // num_heads

    def split(w):
        return (in_features @ w.T).reshape(*lead, T, num_heads, d_head).transpose(-3, -2)

    q, k, v = split(q_proj_weight), split(k_proj_weight), split(v_proj_weight)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_head)
    future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=in_features.device), diagonal=1)
    weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
    out = (weights @ v).transpose(-3, -2).reshape(*lead, T, d_model)
    return out @ o_proj_weight.T, weights.transpose(-3, -2)
