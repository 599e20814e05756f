# VACUOUS: previous chapter's causal mean -- uniform weights over positions 0..i, ignores q and k.
import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    T = q.size(-2)
    weights = torch.tril(torch.ones(T, T, dtype=q.dtype, device=q.device))
    weights = weights / weights.sum(dim=-1, keepdim=True)
    weights = weights.expand(*q.shape[:-2], T, T)
    out = weights @ v
    return out, weights
