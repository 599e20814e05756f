# BUG: the batch flattened into one long sequence for the projections (reshape(1, -1, d_model)) and never split
# back before the attention: every sequence's tokens attend to the earlier sequences' tokens as if they came first.
# Causal within each sequence; right only when the batch has one sequence.
import math

import torch


def run_multihead_self_attention(d_model, num_heads, q_proj_weight, k_proj_weight, v_proj_weight, o_proj_weight,
                                 in_features):
    shape = in_features.shape
    x = in_features.reshape(1, -1, d_model)  # [1, B*T, d_model]
    T, d_head = x.shape[1], d_model // num_heads

    def split(w):
        return (x @ w.T).reshape(1, T, num_heads, d_head).transpose(1, 2)

    q, k, v = split(q_proj_weight), split(k_proj_weight), split(v_proj_weight)
    future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=1)
    scores = (q @ k.transpose(-2, -1) / math.sqrt(d_head)).masked_fill(future, float("-inf"))
    out = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(shape)
    return out @ o_proj_weight.T
