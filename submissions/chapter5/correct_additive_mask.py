# CORRECT: causal attention with an additive mask (0 where allowed, -inf in the future).
import math

import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    T, H = q.size(-2), q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(H)
    if causal:
        mask = torch.full((T, T), float("-inf"), dtype=q.dtype, device=q.device)
        mask = torch.triu(mask, diagonal=1)  # -inf strictly above the diagonal, 0 elsewhere
        scores = scores + mask
    weights = torch.softmax(scores, dim=-1)
    out = weights @ v
    return out, weights
