# VACUOUS: uniform weights over the visible keys, whatever q and k are.
import torch


def cached_attention(q, k, v, cache=None):
    if cache is not None:
        k = torch.cat([cache[0], k], dim=2)
        v = torch.cat([cache[1], v], dim=2)
    T_new, T_all = q.size(-2), k.size(-2)
    allowed = torch.ones(T_new, T_all, dtype=torch.bool, device=q.device).tril(diagonal=T_all - T_new)
    weights = allowed.to(q.dtype).expand(*q.shape[:-2], T_new, T_all)
    weights = weights / weights.sum(-1, keepdim=True)
    return weights @ v, weights, (k, v)
