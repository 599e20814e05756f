# BUG: accepts padding_mask but never uses it: only the causal mask is applied.
import math

import torch


def masked_self_attention(query, key, value, padding_mask=None):
    T = query.size(-2)
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    causal = torch.ones(T, T, dtype=torch.bool, device=query.device).tril()
    weights = torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1)
    return {"hidden_states": weights @ value, "attention_weights": weights}
