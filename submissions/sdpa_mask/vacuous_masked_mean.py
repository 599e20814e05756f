# VACUOUS: uniform weights over the keys the mask allows, ignoring Q and K (the mask is respected, the content not).
import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    if mask is None:
        mask = torch.ones(Q.shape[-2], K.shape[-2], dtype=torch.bool, device=Q.device)
    w = mask.to(V.dtype).expand(*Q.shape[:-1], K.shape[-2])
    w = w / w.sum(dim=-1, keepdim=True).clamp_min(1)
    return w @ V
