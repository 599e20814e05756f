# CORRECT: CS336 style: einops.einsum with named axes, jaxtyping annotations, its own stable softmax; a query row
# whose mask allows no key gets zeros (bool mask, True = may attend).
import math

import torch
from einops import einsum
from jaxtyping import Bool, Float
from torch import Tensor


def softmax(x: Tensor, dim: int) -> Tensor:
    m = x.amax(dim=dim, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))  # a row of -inf keeps max 0, not NaN
    e = torch.exp(x - m)
    s = e.sum(dim=dim, keepdim=True)
    return e / torch.where(s > 0, s, torch.ones_like(s))


def scaled_dot_product_attention(
    Q: Float[Tensor, " ... queries d_k"],
    K: Float[Tensor, " ... keys d_k"],
    V: Float[Tensor, " ... keys d_v"],
    mask: Bool[Tensor, " ... queries keys"] | None = None,
) -> Float[Tensor, " ... queries d_v"]:
    scores = einsum(Q, K, "... queries d_k, ... keys d_k -> ... queries keys") / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = softmax(scores, dim=-1)
    return einsum(weights, V, "... queries keys, ... keys d_v -> ... queries d_v")
