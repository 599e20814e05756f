# BUG: the output comes from F.scaled_dot_product_attention(is_causal=True), and the weights returned beside it are
# a softmax of the raw scores, computed for inspection without the causal mask: future_weights_zero fails; the
# output's checks all pass.
import math

import torch
import torch.nn.functional as F


def run_multihead_self_attention(d_model, num_heads, q_proj_weight, k_proj_weight, v_proj_weight, o_proj_weight,
                                 in_features):
    *lead, T, _ = in_features.shape
    d_head = d_model // num_heads

    def split(w):
        return (in_features @ w.T).reshape(*lead, T, num_heads, d_head).transpose(-3, -2)

    q, k, v = split(q_proj_weight), split(k_proj_weight), split(v_proj_weight)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_head), dim=-1)
    out = out.transpose(-3, -2).reshape(*lead, T, d_model)
    return out @ o_proj_weight.T, weights
