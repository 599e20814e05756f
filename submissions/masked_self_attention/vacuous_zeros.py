# VACUOUS: returns all-zero hidden_states and all-zero weights (no attention at all).
import torch


def masked_self_attention(query, key, value, padding_mask=None):
    T = query.size(-2)
    weights = torch.zeros(*query.shape[:-1], T, dtype=query.dtype, device=query.device)
    return torch.zeros_like(value), weights
