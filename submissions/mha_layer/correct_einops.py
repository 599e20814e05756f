# CORRECT: CS336 style: x @ W.T by einops.einsum against the [d_out, d_in] weights, heads split and merged with
# rearrange "(heads d_head)", a causal bool mask (True = may attend), any number of batch dims.
import math

import torch
from einops import einsum, rearrange
from jaxtyping import Float
from torch import Tensor


def _sdpa(Q, K, V, mask):
    scores = einsum(Q, K, "... q d, ... k d -> ... q k") / math.sqrt(Q.shape[-1])
    scores = scores.masked_fill(~mask, float("-inf"))
    return einsum(torch.softmax(scores, dim=-1), V, "... q k, ... k d -> ... q d")


def run_multihead_self_attention(
    d_model: int,
    num_heads: int,
    q_proj_weight: Float[Tensor, " d_k d_in"],
    k_proj_weight: Float[Tensor, " d_k d_in"],
    v_proj_weight: Float[Tensor, " d_v d_in"],
    o_proj_weight: Float[Tensor, " d_model d_v"],
    in_features: Float[Tensor, " ... sequence_length d_in"],
) -> Float[Tensor, " ... sequence_length d_out"]:
    def heads(w):
        y = einsum(in_features, w, "... t d_in, d_out d_in -> ... t d_out")
        return rearrange(y, "... t (h d) -> ... h t d", h=num_heads)

    q, k, v = heads(q_proj_weight), heads(k_proj_weight), heads(v_proj_weight)
    T = in_features.shape[-2]
    causal = torch.ones(T, T, dtype=torch.bool, device=in_features.device).tril()
    out = rearrange(_sdpa(q, k, v, causal), "... h t d -> ... t (h d)")
    return einsum(out, o_proj_weight, "... t d_v, d_model d_v -> ... t d_model")
