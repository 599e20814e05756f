# BUG (public): incfly/assignment1-basics @ 44054a77500aac617c10c23161cddd1a9924e40a, cs336_basics/model/softmax.py,
# softmax and scaled_dot_product_attention, copied with nothing changed (cross_entropy left out). A CS336 student's
# SDPA with its own max-subtracted softmax: right everywhere CS336's contract reaches, but a query whose mask allows
# no key gets NaN (max of a row of -inf is -inf, -inf - -inf = NaN).
# Licence: MIT (the repository's LICENSE, Copyright 2025 Stanford University, inherited from the handout).
import torch
from jaxtyping import Float, Int
from torch import Tensor


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
