# CORRECT: loops over query positions, softmax over the visible keys of each (batch, query); no -inf at all.
import math

import torch


def masked_self_attention(query, key, value, padding_mask=None):
    B, H, T, D = query.shape
    real = torch.ones(B, T, dtype=torch.bool, device=query.device) if padding_mask is None else padding_mask.bool()
    rows = []
    for i in range(T):
        s = (query[:, :, i : i + 1] @ key[:, :, : i + 1].transpose(-2, -1)).squeeze(-2) / math.sqrt(D)  # [B, H, i+1]
        vis = real[:, None, : i + 1].expand_as(s)
        w = torch.zeros_like(s)
        w = torch.where(vis, torch.softmax(s.masked_fill(~vis, -1e30), dim=-1), w)
        w = w / w.sum(-1, keepdim=True).clamp_min(1e-30) * vis.any(-1, keepdim=True)
        rows.append(torch.cat([w, s.new_zeros(B, H, T - i - 1)], dim=-1))
    weights = torch.stack(rows, dim=2)
    return weights @ value, weights
