# VACUOUS: returns zeros of the output's shape [..., queries, d_v].
import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    return torch.zeros(*Q.shape[:-1], V.shape[-1], dtype=V.dtype, device=V.device)
