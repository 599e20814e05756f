# BUG (public): Ahmedjjj/assignment1-basics @ 49c44d33d99adfc7dd40d41afee6bb2d92550df7, cs336_basics/layers/attention.py
# (softmax, attention) and tests/adapters.py (run_scaled_dot_product_attention), copied with nothing changed.
# `Q_T_K[~mask] = -inf` is boolean indexing, which does not broadcast: right when the mask has the scores' full shape
# (CS336's tests pass [B, Tq, Tk]); a mask shared over the batch ([Tq, Tk], [1, Tq, Tk], [B, 1, Tq, Tk]) raises an
# IndexError, or, when its shape happens to match the scores' leading dims (B == Tq == Tk), sets whole rows [b, i, :] to
# -inf (NaN outputs); a query whose mask allows no key gets NaN.
# Licence: MIT (the repository's LICENSE, Copyright 2025 Stanford University, inherited from the handout).
import numpy as np
import torch
from einops import einsum, rearrange
from jaxtyping import Bool, Float
from torch import Tensor


def softmax(input: Tensor, dim: int) -> torch.Tensor:
    input -= torch.max(input=input, dim=dim, keepdim=True)[0]
    input = torch.exp(input=input)
    return input / torch.sum(input, dim=dim, keepdim=True)


def attention(
    Q: Float[Tensor, " ... queries d_k"],
    K: Float[Tensor, " ... keys d_k"],
    V: Float[Tensor, " ... values d_v"],
    mask: Bool[Tensor, " ... queries keys"] | None = None,
) -> Float[Tensor, "... d_v"]:
    K = rearrange(K, "... keys d_k -> ... d_k keys")
    d_k = Q.size(-1)
    Q_T_K = einsum(Q, K, "... queries d_k, ... d_k keys -> ... queries keys") / np.sqrt(d_k)

    if mask is not None:
        Q_T_K[~mask] = float("-inf")

    return softmax(Q_T_K, dim=-1) @ V


def run_scaled_dot_product_attention(Q, K, V, mask=None):
    return attention(Q=Q, K=K, V=V, mask=mask)
