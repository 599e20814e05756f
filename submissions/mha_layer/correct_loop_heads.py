# CORRECT: the naive unbatched version the docstring mentions: a Python loop over heads, each with its own row slice
# of the weights (head h = rows h*d_head:(h+1)*d_head), concatenated before the output projection.
import math

import torch


def run_multihead_self_attention(d_model, num_heads, q_proj_weight, k_proj_weight, v_proj_weight, o_proj_weight,
                                 in_features):
    d_head = d_model // num_heads
    T = in_features.shape[-2]
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool, device=in_features.device))
    outs = []
    for h in range(num_heads):
        rows = slice(h * d_head, (h + 1) * d_head)
        q = in_features @ q_proj_weight[rows].T
        k = in_features @ k_proj_weight[rows].T
        v = in_features @ v_proj_weight[rows].T
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(d_head)
        outs.append(torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1) @ v)
    return torch.cat(outs, dim=-1) @ o_proj_weight.T
