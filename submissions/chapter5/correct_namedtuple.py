# CORRECT: textbook causal attention returning a NamedTuple(out, weights).
import math
from typing import NamedTuple

import torch


class AttentionResult(NamedTuple):
    out: torch.Tensor
    weights: torch.Tensor


def scaled_dot_product_attention(q, k, v, causal: bool = True) -> AttentionResult:
    T, H = q.size(-2), q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(H)
    if causal:
        tril = torch.tril(torch.ones(T, T, dtype=torch.bool, device=q.device))
        scores = scores.masked_fill(~tril, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return AttentionResult(out=weights @ v, weights=weights)
