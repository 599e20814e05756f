# CORRECT: causal and padding masks applied in two masked_fill steps; NaN rows (only pads visible) set to 0 afterwards.
import math

import torch


def masked_self_attention(query, key, value, padding_mask=None):
    T = query.size(-2)
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    future = torch.ones(T, T, dtype=torch.bool, device=query.device).triu(diagonal=1)
    scores = scores.masked_fill(future, float("-inf"))
    if padding_mask is not None:
        scores = scores.masked_fill((padding_mask == 0).view(-1, 1, 1, T), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    weights = weights.masked_fill(torch.isnan(weights), 0.0)
    return {"hidden_states": weights @ value, "attention_weights": weights}
