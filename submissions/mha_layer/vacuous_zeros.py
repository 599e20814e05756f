# VACUOUS: returns zeros of the output's shape [..., T, d_model].
import torch


def run_multihead_self_attention(d_model, num_heads, q_proj_weight, k_proj_weight, v_proj_weight, o_proj_weight,
                                 in_features):
    return torch.zeros(*in_features.shape[:-1], d_model, dtype=in_features.dtype, device=in_features.device)
