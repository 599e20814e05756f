# CORRECT: explicit Python loop over query positions (function name `causal_attention`).
import math

import torch


def causal_attention(q, k, v, causal: bool = True):
    T, H = q.size(-2), q.size(-1)
    outs, rows = [], []
    for i in range(T):
        n = i + 1 if causal else T  # keys 0..i (or all keys)
        s = q[..., i : i + 1, :] @ k[..., :n, :].transpose(-2, -1) / math.sqrt(H)
        w = torch.softmax(s, dim=-1)  # [..., 1, n]
        outs.append(w @ v[..., :n, :])  # [..., 1, H]
        pad = w.new_zeros(*w.shape[:-1], T - n)  # future positions get weight 0
        rows.append(torch.cat([w, pad], dim=-1))
    out = torch.cat(outs, dim=-2)
    weights = torch.cat(rows, dim=-2)
    return out, weights
