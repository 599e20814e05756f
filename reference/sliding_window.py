"""Sliding-window attention reference (Mistral's band mask): causal attention over the last `window` keys only."""

import math

import torch


def sliding_window_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, window: int):
    """q, k, v: [..., T, H] -> out [..., T, H], weights [..., T, T]; query i sees key j when i - window < j <= i
    (window >= 1; window >= T is plain causal attention)."""
    if window < 1:
        raise ValueError(f"window must be at least 1, got {window}")
    t = q.size(-2)
    pos = torch.arange(t, device=q.device)
    behind = pos[:, None] - pos[None, :]  # i - j
    allowed = (behind >= 0) & (behind < window)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return weights @ v, weights
