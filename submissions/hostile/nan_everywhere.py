# HOSTILE (garbage return): right shapes and dtype, NaN everywhere. Expected: at most the shape points; every
# property check fails or is skipped.
import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    T = q.size(-2)
    return torch.full_like(q, float("nan")), torch.full((*q.shape[:-2], T, T), float("nan"), dtype=q.dtype)
