# CORRECT: folder submission; the causal mask comes from the sibling module mask_utils.py.
import math

import torch
from mask_utils import causal_mask


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    T, H = q.size(-2), q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(H)
    if causal:
        scores = scores.masked_fill(~causal_mask(T, device=q.device), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
