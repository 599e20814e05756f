# BUG (public): incfly/assignment1-basics @ 44054a77500aac617c10c23161cddd1a9924e40a, a CS336 student's layer:
# cs336_basics/model/{linear,rope,softmax,attention}.py (Linear, RoPE, softmax, scaled_dot_product_attention,
# MultiheadSelfAttention) and tests/adapters.py run_multihead_self_attention_with_rope, in one file with the imports
# between them dropped and nothing else changed (cross_entropy left out). Interleaved pairs, token_positions used
# (arange when None): right for positions [T] or [1, T] (CS336's test) on any batch dims; per-sequence positions
# [B, T] index cos/sin to [B, T, d/2], which broadcasts against the heads axis of q [B, heads, T, d_head]: raises
# unless B == num_heads, and then sequence b's positions rotate head b. The cos/sin tables are float32 (float32
# accuracy on float64 inputs), and `if torch.any(positions >= max_seq_len)` cannot run on meta tensors.
# Licence: MIT (the repository's LICENSE, Copyright 2025 Stanford University, inherited from the handout).
from __future__ import annotations

import torch
import torch.nn as nn
from jaxtyping import Float, Int
from torch import Tensor


class Linear(nn.Module):

    def __init__(
        self,
        in_features: int,
        out_features: int,
        device: torch.device | None = None,
        dtype: torch.dtype | None = None,
    ):
        super().__init__()
        sigma = (2 / (in_features + out_features)) ** 0.5
        # I used to use in, out. AI: wrong, just not convention :(
        # But `layer.weight.data = weights` in the adapter does make sense.

        # TODO: this init is from the slides. Check later how it helps with training.
        self.weight = nn.Parameter(torch.empty(out_features, in_features, device=device, dtype=dtype))
        nn.init.trunc_normal_(self.weight, mean=0.0, std=sigma, a=-3 * sigma, b=3 * sigma)

    def forward(
        self,
        x: Float[Tensor, " ... d_in"],
    ) -> Float[Tensor, " ... d_out"]:
        return x @ self.weight.T


class RoPE(nn.Module):
    cos: torch.Tensor
    sin: torch.Tensor

    def __init__(self, theta: float, d_k: int, max_seq_len: int, device=None):
        super().__init__()
        if d_k % 2 != 0:
            raise ValueError("RoPE requires an even embedding dimension.")

        positions = torch.arange(max_seq_len, device=device, dtype=torch.float32)
        dim_indices = torch.arange(0, d_k, 2, device=device, dtype=torch.float32)
        inv_freq = theta ** (-dim_indices / d_k)
        angles = positions[:, None] * inv_freq[None, :]

        self.d_k = d_k
        self.max_seq_len = max_seq_len
        self.register_buffer("cos", torch.cos(angles), persistent=False)
        self.register_buffer("sin", torch.sin(angles), persistent=False)

    def forward(self, x: torch.Tensor, token_positions: torch.Tensor) -> torch.Tensor:
        token_positions = token_positions.to(device=x.device, dtype=torch.long)
        if torch.any(token_positions >= self.max_seq_len):
            raise ValueError("token_positions contains positions beyond max_seq_len.")

        cos = self.cos[token_positions].to(dtype=x.dtype)
        sin = self.sin[token_positions].to(dtype=x.dtype)

        x_even = x[..., 0::2]
        x_odd = x[..., 1::2]

        rotated = torch.empty_like(x)
        rotated[..., 0::2] = x_even * cos - x_odd * sin
        rotated[..., 1::2] = x_even * sin + x_odd * cos
        return rotated


def softmax(t: Tensor, dim: int) -> Tensor:
    shifted = t - torch.max(t, dim=dim, keepdim=True).values
    exp = torch.exp(shifted)
    return exp / torch.sum(exp, dim=dim, keepdim=True)


def scaled_dot_product_attention(
    Q: Tensor,
    K: Tensor,
    V: Tensor,
    mask: Tensor | None = None,
) -> Tensor:
    d_k = Q.shape[-1]
    scores = Q @ K.transpose(-2, -1) / (d_k**0.5)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return softmax(scores, dim=-1) @ V


class MultiheadSelfAttention(nn.Module):
    # This module owns the real q/k/v/o parameters.
    # The adapter passes reference weights from tests and copies them here.
    def __init__(
        self,
        d_model: int,
        num_heads: int,
        max_seq_len: int | None = None,
        theta: float | None = None,
        device: torch.device | None = None,
        dtype: torch.dtype | None = None,
    ):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError("d_model must be divisible by num_heads.")

        self.d_model = d_model
        self.num_heads = num_heads
        self.d_head = d_model // num_heads

        self.q_proj = Linear(d_model, d_model, device=device, dtype=dtype)
        self.k_proj = Linear(d_model, d_model, device=device, dtype=dtype)
        self.v_proj = Linear(d_model, d_model, device=device, dtype=dtype)
        self.output_proj = Linear(d_model, d_model, device=device, dtype=dtype)
        self.rope = None
        if max_seq_len is not None and theta is not None:
            self.rope = RoPE(theta=theta, d_k=self.d_head, max_seq_len=max_seq_len, device=device)

    def forward(self, x: Tensor, token_positions: Tensor | None = None) -> Tensor:
        *batch_dims, sequence_length, _ = x.shape

        # Project first, then split the projected q/k/v features into heads.
        # This is the packed version of the modular Head code from part6.
        q = self._split_heads(self.q_proj(x), batch_dims, sequence_length)
        k = self._split_heads(self.k_proj(x), batch_dims, sequence_length)
        v = self._split_heads(self.v_proj(x), batch_dims, sequence_length)

        if self.rope is not None:
            if token_positions is None:
                token_positions = torch.arange(sequence_length, device=x.device)
            q = self.rope(q, token_positions)
            k = self.rope(k, token_positions)

        mask = torch.tril(
            torch.ones(sequence_length, sequence_length, device=x.device, dtype=torch.bool)
        )
        attn = scaled_dot_product_attention(q, k, v, mask)
        # Concatenate heads, then use output_proj to mix them back into the model stream.
        attn = attn.transpose(-3, -2).contiguous()
        attn = attn.reshape(*batch_dims, sequence_length, self.d_model)
        # We choose to attn dim same as the embedding. somehow for the efficiency? not fully get.
        # Could be different in theory as we can project from x -> y arbitrarily.
        return self.output_proj(attn)

    def _split_heads(self, x: Tensor, batch_dims: list[int], sequence_length: int) -> Tensor:
        x = x.reshape(*batch_dims, sequence_length, self.num_heads, self.d_head)
        return x.transpose(-3, -2)


def run_multihead_self_attention_with_rope(
    d_model: int,
    num_heads: int,
    max_seq_len: int,
    theta: float,
    q_proj_weight: Float[Tensor, " d_model d_model"],
    k_proj_weight: Float[Tensor, " d_model d_model"],
    v_proj_weight: Float[Tensor, " d_model d_model"],
    o_proj_weight: Float[Tensor, " d_model d_model"],
    in_features: Float[Tensor, " ... sequence_length d_model"],
    token_positions: Int[Tensor, " ... sequence_length"] | None = None,
) -> Float[Tensor, " ... sequence_length d_model"]:
    """
    Given the key, query, and value projection weights of a naive unbatched
    implementation of multi-head attention, return the output of an optimized batched
    implementation. This implementation should handle the key, query, and value projections
    for all heads in a single matrix multiply.
    This version of MHA should include RoPE.
    In this case, the RoPE embedding dimension must be the head embedding dimension (d_model // num_heads).
    See section 3.2.2 of Vaswani et al., 2017.

    Args:
        d_model (int): Dimensionality of the feedforward input and output.
        num_heads (int): Number of heads to use in multi-headed attention.
        max_seq_len (int): Maximum sequence length to pre-cache if your implementation does that.
        theta (float): RoPE parameter.
        q_proj_weight (Float[Tensor, "d_model d_model"]): Weights for the Q projection
        k_proj_weight (Float[Tensor, "d_model d_model"]): Weights for the K projection
        v_proj_weight (Float[Tensor, "d_model d_model"]): Weights for the V projection
        o_proj_weight (Float[Tensor, "d_model d_model"]): Weights for the output projection
        in_features (Float[Tensor, "... sequence_length d_model"]): Tensor to run your implementation on.
        token_positions (Int[Tensor, " ... sequence_length"] | None): Optional tensor with the positions of the tokens

    Returns:
        Float[Tensor, " ... sequence_length d_model"]: Tensor with the output of running your optimized, batched multi-headed attention
        implementation with the given QKV projection weights and input features.
    """
    attention = MultiheadSelfAttention(
        d_model=d_model,
        num_heads=num_heads,
        max_seq_len=max_seq_len,
        theta=theta,
        device=q_proj_weight.device,
        dtype=q_proj_weight.dtype,
    )
    attention.q_proj.weight.data = q_proj_weight
    attention.k_proj.weight.data = k_proj_weight
    attention.v_proj.weight.data = v_proj_weight
    attention.output_proj.weight.data = o_proj_weight
    return attention(in_features, token_positions)
