# VACUOUS: chapter 4's causal mean: uniform weights over the visible real keys, ignoring query and key.
import torch


def masked_self_attention(query, key, value, padding_mask=None):
    B, H, T, _ = query.shape
    w = torch.ones(T, T, dtype=query.dtype, device=query.device).tril().expand(B, H, T, T)
    if padding_mask is not None:
        w = w * padding_mask[:, None, None, :].to(query.dtype)
    w = w / w.sum(-1, keepdim=True).clamp_min(1.0)
    return w @ value, w
