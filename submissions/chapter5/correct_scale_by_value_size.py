# CORRECT: scores divided by sqrt(v.size(-1)), the value size (as in HF GPT-2's `value.size(-1) ** 0.5`): chapter 5's
# contract gives q, k and v one size H, so this is right here; it would be wrong where v has a size of its own.
import math

import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    T = q.size(-2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(v.size(-1))
    if causal:
        scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
