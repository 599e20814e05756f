# CORRECT: F.scaled_dot_product_attention(is_causal=True) on the split heads. CS336's handout forbids
# torch.nn.functional; a rubric that enforces the handout's policy would flag this import.
import torch.nn.functional as F


def run_multihead_self_attention(d_model, num_heads, q_proj_weight, k_proj_weight, v_proj_weight, o_proj_weight,
                                 in_features):
    *lead, T, _ = in_features.shape
    q, k, v = (
        (in_features @ w.T).unflatten(-1, (num_heads, -1)).transpose(-3, -2)
        for w in (q_proj_weight, k_proj_weight, v_proj_weight)
    )
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return out.transpose(-3, -2).reshape(*lead, T, -1) @ o_proj_weight.T
