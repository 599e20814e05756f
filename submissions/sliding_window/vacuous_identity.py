# VACUOUS: returns v unchanged and identity weights (what window = 1 gives, for every window).
import torch


def sliding_window_attention(q, k, v, window):
    T = q.size(-2)
    weights = torch.eye(T, dtype=q.dtype, device=q.device).expand(*q.shape[:-2], T, T)
    return v, weights
