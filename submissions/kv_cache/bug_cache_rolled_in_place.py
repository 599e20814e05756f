# BUG: a rolling buffer (as in Mistral's): besides returning the new cache, it writes the last P positions back into
# the caller's k_past and v_past with copy_, so the caller's cache changes under it.
import math

import torch


def cached_attention(q, k, v, cache=None):
    k_all, v_all = k, v
    if cache is not None:
        k_past, v_past = cache
        k_all = torch.cat([k_past, k], dim=2)
        v_all = torch.cat([v_past, v], dim=2)
        k_past.copy_(k_all[..., -k_past.size(-2) :, :])
        v_past.copy_(v_all[..., -v_past.size(-2) :, :])
    T_new, T_all = q.size(-2), k_all.size(-2)
    scores = q @ k_all.transpose(-2, -1) / math.sqrt(q.size(-1))
    allowed = torch.ones(T_new, T_all, dtype=torch.bool, device=q.device).tril(diagonal=T_all - T_new)
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return weights @ v_all, weights, (k_all, v_all)
