"""Prefix LM reference: the prefix (the prompt) is seen by every query, the rest of the sequence causally."""

import math

import torch


def prefix_lm_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, prefix_len):
    """q, k, v: [B, T, H] or [B, heads, T, H]; prefix_len: an int, or a [B] integer tensor (one length per batch
    row, shared by its heads). Query i sees key j when j < prefix_len or j <= i: 0 is causal attention, T full
    bidirectional attention. Returns out like q and weights [..., T, T]."""
    t = q.size(-2)
    pos = torch.arange(t, device=q.device)
    if isinstance(prefix_len, torch.Tensor):  # [B] -> [B, 1, (1,) 1]: batch rows line up, heads and queries broadcast
        prefix_len = prefix_len.to(q.device).reshape(-1, *([1] * (q.dim() - 1)))
    allowed = (pos[None, :] <= pos[:, None]) | (pos < prefix_len)  # keys in the prefix, for every query
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return weights @ v, weights
