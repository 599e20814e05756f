"""Grouped-query attention reference: fewer key/value heads than query heads, each shared by a group of queries."""

import math

import torch


def grouped_query_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor):
    """q: [B, Hq, T, D], k: [B, Hkv, T, D], v: [B, Hkv, T, Dv] with Hq % Hkv == 0 -> out [B, Hq, T, Dv], weights
    [B, Hq, T, T]. Query head h reads key/value head h // (Hq // Hkv) (repeat_interleave); future keys masked."""
    group = q.size(-3) // k.size(-3)
    k = k.repeat_interleave(group, dim=-3)
    v = v.repeat_interleave(group, dim=-3)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    t = q.size(-2)
    allowed = torch.ones(t, t, dtype=torch.bool, device=q.device).tril()
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return weights @ v, weights
