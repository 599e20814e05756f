# VACUOUS: returns v unchanged and identity weights (each position attends only to itself).
import torch


def prefix_lm_attention(q, k, v, prefix_len):
    T = q.size(-2)
    weights = torch.eye(T, dtype=q.dtype, device=q.device).expand(*q.shape[:-2], T, T)
    return v, weights
