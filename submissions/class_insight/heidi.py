"""Chapter 5 exercise: causal scaled dot-product attention.

Fill in scaled_dot_product_attention below; keep its signature. Run this file to try it.
"""
import math

import torch


def causal_mask(t: int, device=None) -> torch.Tensor:
    """[t, t] bool: True where query i may attend to key j (j <= i)."""
    return torch.ones(t, t, dtype=torch.bool, device=device).tril()


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    """q, k, v: [..., T, H]. Returns (out [..., T, H], weights [..., T, T])."""
    b, num_tokens, d_in = q.shape  # New batch dimension b
    keys, queries, values = k, q, v
    attn_scores = queries @ keys.transpose(1, 2)  # Changed transpose
    if causal:
        mask = torch.triu(torch.ones(num_tokens, num_tokens, device=q.device), diagonal=1)
        attn_scores = attn_scores.masked_fill(  # New, _ ops are in-place
            mask.bool()[:num_tokens, :num_tokens], -torch.inf)  # `:num_tokens` to account for cases where the number of tokens in the batch is smaller than the supported context_size
    attn_weights = torch.softmax(
        attn_scores / keys.shape[-1]**0.5, dim=-1
    )
    context_vec = attn_weights @ values
    return context_vec, attn_weights


if __name__ == "__main__":
    q = torch.randn(2, 4, 8)
    k = torch.randn(2, 4, 8)
    v = torch.randn(2, 4, 8)
    out, weights = scaled_dot_product_attention(q, k, v)
    print(out.shape, weights.shape)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 4))
    assert torch.all(weights.triu(1) == 0)
