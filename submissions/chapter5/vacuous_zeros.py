# VACUOUS: returns all-zero output and all-zero weights (no attention at all).
import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    T = q.size(-2)
    out = torch.zeros_like(q)
    weights = torch.zeros(*q.shape[:-2], T, T, dtype=q.dtype, device=q.device)
    return out, weights
