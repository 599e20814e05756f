# VACUOUS: returns v unchanged and identity weights (each position attends only to itself).
import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    T = q.size(-2)
    eye = torch.eye(T, dtype=q.dtype, device=q.device)
    weights = eye.expand(*q.shape[:-2], T, T)
    return v, weights
