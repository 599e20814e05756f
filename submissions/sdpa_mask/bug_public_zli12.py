# BUG (public): zli12/cs336-hw1 @ ba4bdb82d73f1f54d46a2ee4f2378273dda40aa8, cs336_basics/transformer.py,
# scaled_dot_product_attention, copied with nothing changed. A CS336 student's SDPA (einops, -inf fill, torch.softmax):
# right everywhere CS336's contract reaches, but a query whose mask allows no key gets NaN (softmax of a row of -inf).
# Licence: MIT (the repository's LICENSE, Copyright 2025 Stanford University, inherited from the handout).
from __future__ import annotations

import math

import torch
from einops import einsum


def scaled_dot_product_attention(
    Q: torch.Tensor,
    K: torch.Tensor,
    V: torch.Tensor,
    mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """Compute scaled dot-product attention with optional boolean masking."""
    # Q/K store key-query channels in their last dimension.
    d_k = Q.shape[-1]

    # Dot each query against each key using readable axis names:
    # - query_pos/key_pos are sequence positions
    # - d_k is the per-head channel dimension being summed out
    # Then scale by 1/sqrt(d_k) as in Vaswani et al.
    attention_logits = einsum(
        Q,
        K,
        "... query_pos d_k, ... key_pos d_k -> ... query_pos key_pos",
    ) / math.sqrt(d_k)
    if mask is not None:
        # True means "can attend"; False means "blocked".
        mask = mask.to(dtype=torch.bool, device=attention_logits.device)
        # Put -inf on blocked logits so softmax gives them zero probability.
        attention_logits = attention_logits.masked_fill(~mask, float("-inf"))

    # Convert logits to probabilities that sum to 1 across the key axis.
    attn_probs = torch.softmax(attention_logits, dim=-1)

    # Weighted sum of value vectors for each query position.
    # value_dim is the output feature dimension for each value vector.
    return einsum(
        attn_probs.to(V.dtype),
        V,
        "... query_pos key_pos, ... key_pos value_dim -> ... query_pos value_dim",
    )
