# VACUOUS: uniform weights over the past (chapter 4's causal mean), whatever q and k are.
import torch


def grouped_query_attention(q, k, v):
    group = q.size(1) // k.size(1)
    v = v.repeat_interleave(group, dim=1)
    T = q.size(-2)
    weights = torch.ones(T, T, dtype=q.dtype, device=q.device).tril()
    weights = (weights / weights.sum(-1, keepdim=True)).expand(*q.shape[:-2], T, T)
    return weights @ v, weights
