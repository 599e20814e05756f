"""Chapter 5 exercise: causal scaled dot-product attention.

Fill in scaled_dot_product_attention below; keep its signature. Run this file to try it.
"""
import math

import torch
import torch.nn.functional as F

block_size = 128
# causal mask to ensure that attention is only applied to the left in the input sequence
bias = torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size)


def causal_mask(t: int, device=None) -> torch.Tensor:
    """[t, t] bool: True where query i may attend to key j (j <= i)."""
    return torch.ones(t, t, dtype=torch.bool, device=device).tril()


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    """q, k, v: [..., T, H]. Returns (out [..., T, H], weights [..., T, T])."""
    T = q.size(-2)
    # causal self-attention; Self-attend: (B, nh, T, hs) x (B, nh, hs, T) -> (B, nh, T, T)
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    if causal:
        att = att.masked_fill(bias[:,:,:T,:T].to(q.device)[0, 0] == 0, float("-inf"))
    att = F.softmax(att, dim=-1)
    y = att @ v # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
    return y, att


if __name__ == "__main__":
    q = torch.randn(2, 4, 8)
    k = torch.randn(2, 4, 8)
    v = torch.randn(2, 4, 8)
    out, weights = scaled_dot_product_attention(q, k, v)
    print(out.shape, weights.shape)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 4))
    assert torch.all(weights.triu(1) == 0)
