# CORRECT (folder): functional attention for CS336 assignment 1, written for these samples: plain torch, x @ W.T with
# the [d_out, d_in] weights, heads split as [..., T, heads, d_head] then transposed, a torch.where causal mask, RoPE on
# interleaved pairs with positions [..., T] (arange when None) broadcast over the heads.
import math

import torch


def softmax(x, dim):
    m = x.amax(dim=dim, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    e = torch.exp(x - m)
    s = e.sum(dim=dim, keepdim=True)
    return e / torch.where(s > 0, s, torch.ones_like(s))


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = torch.where(mask, scores, float("-inf"))
    return softmax(scores, dim=-1) @ V


def rope(x, token_positions, theta):
    d = x.shape[-1]
    inv_freq = theta ** (-torch.arange(0, d, 2, device=x.device, dtype=torch.float64) / d)
    angle = token_positions.to(torch.float64)[..., None] * inv_freq
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    out = torch.empty_like(x)
    out[..., 0::2] = x[..., 0::2] * cos - x[..., 1::2] * sin
    out[..., 1::2] = x[..., 0::2] * sin + x[..., 1::2] * cos
    return out


def multihead_self_attention(x, w_q, w_k, w_v, w_o, num_heads, theta=None, token_positions=None):
    *lead, T, d_model = x.shape
    d_head = w_q.shape[0] // num_heads

    def split(w):
        return (x @ w.T).reshape(*lead, T, num_heads, d_head).transpose(-3, -2)

    q, k, v = split(w_q), split(w_k), split(w_v)
    if theta is not None:
        if token_positions is None:
            token_positions = torch.arange(T, device=x.device)
        positions = token_positions.unsqueeze(-2)  # [..., 1, T]
        q, k = rope(q, positions, theta), rope(k, positions, theta)
    causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
    out = scaled_dot_product_attention(q, k, v, causal)
    return out.transpose(-3, -2).reshape(*lead, T, num_heads * d_head) @ w_o.T
