# BUG (public): zli12/cs336-hw1 @ ba4bdb82d73f1f54d46a2ee4f2378273dda40aa8, a CS336 student's layer:
# cs336_basics/transformer.py (scaled_dot_product_attention, sdpa_attention, Linear, RMSNorm,
# RotaryPositionalEmbedding, CausalMultiHeadSelfAttention; the rest of the file left out) and tests/adapters.py
# run_multihead_self_attention_with_rope, copied with nothing changed. The adapter never passes token_positions and
# the layer rotates by torch.arange(seq_len): right whenever the positions are 0..T-1 (CS336's test passes exactly
# arange, so it passes) or any constant shift of them, wrong for other positions (gaps, a packed batch, a permutation).
# Licence: MIT (the repository's LICENSE, Copyright 2025 Stanford University, inherited from the handout).
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from einops import einsum, rearrange
from jaxtyping import Bool, Float, Int
from torch import Tensor, nn


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


def sdpa_attention(
    Q: torch.Tensor,
    K: torch.Tensor,
    V: torch.Tensor,
    is_causal: bool = True,
) -> torch.Tensor:
    """Attention via PyTorch's fused SDPA kernel (Flash-Attention 2 on capable GPUs).

    Inputs follow the (..., num_heads, seq_len, head_dim) layout already produced
    by CausalMultiHeadSelfAttention. With ``is_causal=True`` the kernel applies
    the lower-triangular mask implicitly without materializing it, which is the
    main reason this path is faster and uses less memory than the einsum path.
    """
    # F.scaled_dot_product_attention scales by 1/sqrt(head_dim) by default,
    # matching the einsum implementation above.
    return F.scaled_dot_product_attention(Q, K, V, is_causal=is_causal)


class Linear(nn.Module):
    """A bias-free linear layer compatible with nn.Linear's core interface."""

    def __init__(
        self,
        in_features: int,
        out_features: int,
        device: torch.device | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features

        self.weight = nn.Parameter(torch.empty((out_features, in_features), device=device, dtype=dtype))
        # Linear weights: N(0, 2/(din+dout)) truncated to [-3σ, 3σ].
        std = math.sqrt(2.0 / (in_features + out_features))
        nn.init.trunc_normal_(self.weight, mean=0.0, std=std, a=-3 * std, b=3 * std)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return einsum(x, self.weight, "... d_in, d_out d_in -> ... d_out")


class RMSNorm(nn.Module):
    """Root Mean Square Layer Normalization.

    This module normalizes across the last dimension and applies a learned gain.
    """

    def __init__(
        self,
        d_model: int,
        eps: float = 1e-5,
        device: torch.device | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        self.d_model = d_model
        self.eps = eps

        # Learnable gain vector g in the RMSNorm equation.
        # Spec says RMSNorm gains are initialized to 1.
        self.weight = nn.Parameter(torch.ones((d_model,), device=device, dtype=dtype))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # Keep input dtype so we can return the same dtype after stable float32 math.
        _in_dtype = x.dtype

        # upcast to float32 before squaring to improve numerical stability.
        x_fp32 = x.to(torch.float32)

        # compute RMS over the final dimension:
        rms = torch.sqrt(torch.mean(x_fp32**2, dim=-1, keepdim=True) + self.eps)

        # normalize then apply gain:
        out = x_fp32 / rms * self.weight

        return out.to(_in_dtype)


class RotaryPositionalEmbedding(nn.Module):
    """Applies rotary position embeddings (RoPE) to the last dimension.

    Input shape: (..., seq_len, d_k)
    Positions shape: (..., seq_len)
    """

    def __init__(
        self,
        theta: float,
        d_k: int,
        max_seq_len: int,
        device: torch.device | None = None,
    ) -> None:
        super().__init__()
        if d_k % 2 != 0:
            raise ValueError(f"d_k must be even for RoPE, got {d_k}")

        self.theta = theta
        self.d_k = d_k
        self.max_seq_len = max_seq_len

        # RoPE rotates pairs of features: (0,1), (2,3), ..., (d_k-2, d_k-1).
        # So we need one frequency per pair, i.e. d_k/2 frequencies total.
        pair_idx = torch.arange(0, d_k, 2, device=device, dtype=torch.float32)
        # inv_freq[k] = 1 / theta^(2k/d_k), where pair_idx already stores 2k.
        # Larger k -> smaller frequency -> slower rotation (captures longer-range structure).
        inv_freq = 1.0 / (theta ** (pair_idx / d_k))

        # Precompute all angles for all positions once:
        # angles[pos, k] = pos * inv_freq[k].
        positions = torch.arange(max_seq_len, device=device, dtype=torch.float32)
        angles = torch.outer(positions, inv_freq)  # (max_seq_len, d_k/2)

        # Cache cos/sin lookup tables as buffers:
        # - not learnable (unlike nn.Parameter)
        # - moved with .to(device)
        # - persistent=False keeps checkpoints smaller
        self.register_buffer("cos_cached", torch.cos(angles), persistent=False)
        self.register_buffer("sin_cached", torch.sin(angles), persistent=False)

    def forward(self, x: torch.Tensor, token_positions: torch.Tensor) -> torch.Tensor:
        # token_positions can be batched. Indexing with it gives
        # cos/sin shaped like (..., seq_len, d_k/2), matching x's batch/sequence dims.
        cos = self.cos_cached[token_positions].to(dtype=x.dtype)
        sin = self.sin_cached[token_positions].to(dtype=x.dtype)

        # Split last dimension into even/odd coordinates of each 2D pair.
        # Example: [x0, x1, x2, x3] -> even=[x0, x2], odd=[x1, x3]
        x_even = x[..., 0::2]
        x_odd = x[..., 1::2]

        # Apply standard 2D rotation:
        # [x_even']   [ cos -sin ] [x_even]
        # [x_odd' ] = [ sin  cos ] [x_odd ]
        out_even = x_even * cos - x_odd * sin
        out_odd = x_even * sin + x_odd * cos

        # Interleave rotated even/odd components back to original last-dim layout.
        # stack(..., dim=-1) makes pairs [even_i, odd_i], and reshape flattens to
        # [..., even_0, odd_0, even_1, odd_1, ...].
        return torch.stack((out_even, out_odd), dim=-1).reshape_as(x)


class CausalMultiHeadSelfAttention(nn.Module):
    """Causal multi-head self-attention with optional RoPE and QK-Norm.

    When ``use_sdpa=True`` (the fast path), the attention math runs through
    PyTorch's fused ``F.scaled_dot_product_attention`` (Flash-Attention 2 on
    capable GPUs). Otherwise the einsum path materializes the causal mask and
    softmax explicitly; that path is kept for assignment-required tests and
    for CPU/MPS fallbacks.

    When ``qk_norm=True`` we apply a per-head RMSNorm to Q and K *after* RoPE
    rotation and *before* the attention dot product. This is a NanoGPT-speedrun
    style stabilizer that lets you push the optimizer LR significantly higher
    without losing the QK product to numerical drift.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        max_seq_len: int | None = None,
        theta: float | None = None,
        use_sdpa: bool = False,
        qk_norm: bool = False,
        device: torch.device | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"d_model ({d_model}) must be divisible by num_heads ({num_heads})")

        self.d_model = d_model
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.use_sdpa = use_sdpa
        self.qk_norm = qk_norm

        # One projection each for Q/K/V over all heads at once.
        self.q_proj = Linear(in_features=d_model, out_features=d_model, device=device, dtype=dtype)
        self.k_proj = Linear(in_features=d_model, out_features=d_model, device=device, dtype=dtype)
        self.v_proj = Linear(in_features=d_model, out_features=d_model, device=device, dtype=dtype)
        self.output_proj = Linear(in_features=d_model, out_features=d_model, device=device, dtype=dtype)

        # RoPE is optional for this class:
        # - if both theta and max_seq_len are provided, enable RoPE on Q/K
        # - otherwise run standard (non-RoPE) causal MHA
        if (max_seq_len is None) ^ (theta is None):
            raise ValueError("Provide both max_seq_len and theta together to enable RoPE.")
        self.rope: RotaryPositionalEmbedding | None = None
        if max_seq_len is not None and theta is not None:
            self.rope = RotaryPositionalEmbedding(
                theta=theta,
                d_k=self.head_dim,
                max_seq_len=max_seq_len,
                device=device,
            )

        # Per-head RMSNorm operates on the last dim (head_dim); the same weight
        # is applied to every head. We keep separate norms for Q and K because
        # they evolve with different gradients during training.
        self.q_norm: RMSNorm | None = None
        self.k_norm: RMSNorm | None = None
        if qk_norm:
            self.q_norm = RMSNorm(d_model=self.head_dim, device=device, dtype=dtype)
            self.k_norm = RMSNorm(d_model=self.head_dim, device=device, dtype=dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # Star-unpacking keeps any leading batch-like dims (e.g., batch, heads, shards),
        # then extracts sequence length and ignores the final model-width entry.
        *batch_dims, seq_len, _ = x.shape

        # Project once per tensor, then split model width into (num_heads, head_dim).
        # rearrange keeps the operation declarative and shape-focused.
        q = rearrange(
            self.q_proj(x),
            "... seq_len (num_heads head_dim) -> ... num_heads seq_len head_dim",
            num_heads=self.num_heads,
        )
        k = rearrange(
            self.k_proj(x),
            "... seq_len (num_heads head_dim) -> ... num_heads seq_len head_dim",
            num_heads=self.num_heads,
        )
        v = rearrange(
            self.v_proj(x),
            "... seq_len (num_heads head_dim) -> ... num_heads seq_len head_dim",
            num_heads=self.num_heads,
        )

        # When RoPE is enabled, rotate Q/K in each head with identical position angles.
        # V is intentionally left unchanged.
        if self.rope is not None:
            token_positions = torch.arange(seq_len, device=x.device)
            q = self.rope(q, token_positions)
            k = self.rope(k, token_positions)

        # Apply QK-Norm post-RoPE so the gain weights live in the post-rotation basis.
        if self.q_norm is not None and self.k_norm is not None:
            q = self.q_norm(q)
            k = self.k_norm(k)

        if self.use_sdpa:
            # Causal mask is applied implicitly by the fused kernel.
            attn_out = sdpa_attention(Q=q, K=k, V=v, is_causal=True)
        else:
            # Causal mask shared by all batch items/heads:
            # token i only sees tokens at positions <= i.
            causal_mask = torch.tril(torch.ones((seq_len, seq_len), dtype=torch.bool, device=x.device))
            attn_out = scaled_dot_product_attention(Q=q, K=k, V=v, mask=causal_mask)

        # Move heads back into the model-width axis before the output projection.
        attn_out = rearrange(attn_out, "... num_heads seq_len head_dim -> ... seq_len (num_heads head_dim)")
        return self.output_proj(attn_out)


def run_multihead_self_attention_with_rope(
    d_model: int,
    num_heads: int,
    max_seq_len: int,
    theta: float,
    q_proj_weight: Float[Tensor, " d_k d_in"],
    k_proj_weight: Float[Tensor, " d_k d_in"],
    v_proj_weight: Float[Tensor, " d_v d_in"],
    o_proj_weight: Float[Tensor, " d_model d_v"],
    in_features: Float[Tensor, " ... sequence_length d_in"],
    token_positions: Int[Tensor, " ... sequence_length"] | None = None,
) -> Float[Tensor, " ... sequence_length d_out"]:
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
        q_proj_weight (Float[Tensor, "d_k d_in"]): Weights for the Q projection
        k_proj_weight (Float[Tensor, "d_k d_in"]): Weights for the K projection
        v_proj_weight (Float[Tensor, "d_k d_in"]): Weights for the V projection
        o_proj_weight (Float[Tensor, "d_model d_v"]): Weights for the output projection
        in_features (Float[Tensor, "... sequence_length d_in"]): Tensor to run your implementation on.
        token_positions (Int[Tensor, " ... sequence_length"] | None): Optional tensor with the positions of the tokens

    Returns:
        Float[Tensor, " ... sequence_length d_out"]: Tensor with the output of running your optimized, batched multi-headed attention
        implementation with the given QKV projection weights and input features.
    """
    # Reuse the same MHA module and enable RoPE through constructor args.
    mha = CausalMultiHeadSelfAttention(
        d_model=d_model,
        num_heads=num_heads,
        max_seq_len=max_seq_len,
        theta=theta,
        device=q_proj_weight.device,
        dtype=q_proj_weight.dtype,
    )
    mha.load_state_dict(
        {
            "q_proj.weight": q_proj_weight,
            "k_proj.weight": k_proj_weight,
            "v_proj.weight": v_proj_weight,
            "output_proj.weight": o_proj_weight,
        }
    )
    # Forward pass now applies RoPE (Q/K only) inside the MHA class.
    return mha(in_features)
