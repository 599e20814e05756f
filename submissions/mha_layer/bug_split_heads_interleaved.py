# BUG: splits and merges heads as "(d h)": head h gets features h, h + heads, h + 2*heads, ... instead of the block
# h*d_head:(h+1)*d_head that CS336's weights are ordered by (rows = (num_heads, d_k)); the heads attend with the wrong
# feature groups. Right only when heads == 1.
import math

import torch
from einops import rearrange


def run_multihead_self_attention(d_model, num_heads, q_proj_weight, k_proj_weight, v_proj_weight, o_proj_weight,
                                 in_features):
    q, k, v = (rearrange(in_features @ w.T, "... t (d h) -> ... h t d", h=num_heads)
               for w in (q_proj_weight, k_proj_weight, v_proj_weight))
    T = in_features.shape[-2]
    causal = torch.ones(T, T, dtype=torch.bool, device=in_features.device).tril()
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~causal, float("-inf"))
    out = torch.softmax(scores, dim=-1) @ v
    return rearrange(out, "... h t d -> ... t (d h)") @ o_proj_weight.T
