"""Scaled dot-product attention with a mask argument (CS336 assignment 1's `run_scaled_dot_product_attention`): it
returns the output alone, as the contract does; the grader reads the weights from `weights`."""

import math

import torch


def weights(Q: torch.Tensor, K: torch.Tensor, allowed: torch.Tensor | None = None) -> torch.Tensor:
    """Q [..., Tq, Dk], K [..., Tk, Dk]; allowed: bool, broadcastable to [..., Tq, Tk], True where a query may attend
    (None: every key). A query with no allowed key gets zero weights, hence a zero output."""
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
    if allowed is None:
        return torch.softmax(scores, dim=-1)
    w = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return torch.where(allowed, w, 0.0)  # exact zeros; a row without an allowed key: 0, not NaN


def scaled_dot_product_attention(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, allowed: torch.Tensor | None = None):
    return weights(Q, K, allowed) @ V
