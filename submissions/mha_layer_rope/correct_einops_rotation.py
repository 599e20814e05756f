# CORRECT: CS336 style with einops: "... (pairs two) -> ... pairs two" groups adjacent features, a 2x2 rotation matrix
# per (position, pair) applied with einsum, cos/sin buffers cached in a small nn.Module (as the handout suggests).
import math

import torch
from einops import einsum, rearrange
from torch import nn


class RotaryPositionalEmbedding(nn.Module):
    def __init__(self, theta, d_k, max_seq_len, device=None, dtype=torch.float32):
        super().__init__()
        k = torch.arange(d_k // 2, device=device, dtype=dtype)
        angle = torch.arange(max_seq_len, device=device, dtype=dtype)[:, None] / theta ** (2 * k / d_k)
        cos, sin = angle.cos(), angle.sin()
        rot = torch.stack([torch.stack([cos, -sin], -1), torch.stack([sin, cos], -1)], -2)
        self.register_buffer("rot", rot, persistent=False)  # [max_seq_len, d_k/2, 2 (out), 2 (in)]

    def forward(self, x, token_positions):
        pairs = rearrange(x, "... t (p two) -> ... t p two", two=2)
        out = einsum(self.rot[token_positions], pairs, "... t p o i, ... t p i -> ... t p o")
        return rearrange(out, "... t p two -> ... t (p two)")


def run_multihead_self_attention_with_rope(d_model, num_heads, max_seq_len, theta, q_proj_weight, k_proj_weight,
                                           v_proj_weight, o_proj_weight, in_features, token_positions=None):
    T = in_features.shape[-2]
    rope = RotaryPositionalEmbedding(theta, d_model // num_heads, max_seq_len, in_features.device, in_features.dtype)
    if token_positions is None:
        token_positions = torch.arange(T, device=in_features.device)
    positions = rearrange(token_positions, "... t -> ... 1 t")
    q, k, v = (rearrange(einsum(in_features, w, "... t i, o i -> ... t o"), "... t (h d) -> ... h t d", h=num_heads)
               for w in (q_proj_weight, k_proj_weight, v_proj_weight))
    q, k = rope(q, positions), rope(k, positions)
    causal = torch.ones(T, T, dtype=torch.bool, device=in_features.device).tril()
    scores = einsum(q, k, "... h q d, ... h k d -> ... h q k") / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1)
    out = rearrange(einsum(weights, v, "... h q k, ... h k d -> ... h q d"), "... h t d -> ... t (h d)")
    return einsum(out, o_proj_weight, "... t i, o i -> ... t o")
