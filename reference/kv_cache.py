"""KV-cache attention reference: new tokens attend to the cached past and to themselves, causally."""

import math

import torch


def cached_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cache=None):
    """q, k, v: [B, H, T_new, D] for the new tokens; cache: None or (k_past, v_past) of [B, H, P, D].
    -> out [B, H, T_new, D], weights [B, H, T_new, P + T_new], (k_all, v_all) with k_all = cat(k_past, k) on the
    time dim. New query i sits at absolute position P + i and sees keys 0 .. P + i (the mask's bottom-right part)."""
    if cache is not None:
        k_past, v_past = cache
        k = torch.cat([k_past, k], dim=-2)
        v = torch.cat([v_past, v], dim=-2)
    t_new, t_all = q.size(-2), k.size(-2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    allowed = torch.ones(t_new, t_all, dtype=torch.bool, device=q.device).tril(t_all - t_new)
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return weights @ v, weights, (k, v)
