# VACUOUS: returns value unchanged and identity weights (each position attends only to itself).
import torch


def masked_self_attention(query, key, value, padding_mask=None):
    T = query.size(-2)
    eye = torch.eye(T, dtype=query.dtype, device=query.device).expand(*query.shape[:-2], T, T)
    return value, eye
