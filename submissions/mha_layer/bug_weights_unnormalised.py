# BUG: the softmax's normalisation applied to the output, as flash attention does (y = (e @ v) / e.sum(-1)), and the
# unnormalised e = exp(scores - max) returned as the weights: exactly 0 above the diagonal, but rows that do not sum
# to 1: weights_sum_to_one fails; the output's checks all pass.
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
    scores = scores.masked_fill(future, float("-inf"))
    e = torch.exp(scores - scores.amax(-1, keepdim=True))
    out = (e @ v) / e.sum(-1, keepdim=True)
    out = out.transpose(-3, -2).reshape(*lead, T, d_model)
    return out @ o_proj_weight.T, e
