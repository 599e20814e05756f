# BUG (public): donglinkang2021/cs336-assignment1-basics @ c7bd4a373c1c56fc6cb02cc3f848c13d02a2b825,
# cs336_basics/model.py scaled_dot_product_attention and cs336_basics/nn_utils.py softmax (imported there as
# `from .nn_utils import softmax`; both in one file here), nothing else changed. masked_fill(mask == 0, -inf): right
# everywhere CS336's contract reaches, but a query whose mask allows no key gets NaN.
# Licence: MIT (the repository's LICENSE, Copyright 2025 Stanford University, inherited from the handout).
import math

import torch


# uv run pytest -k test_softmax_matches_pytorch
def softmax(x:torch.Tensor, dim:int) -> torch.Tensor:
    # [..., d_model] -> [..., d_model]
    x_exp = torch.exp(x - x.max(dim=dim, keepdim=True).values)
    return x_exp / x_exp.sum(dim=dim,keepdim=True)

# uv run pytest -k test_scaled_dot_product_attention
# uv run pytest -k test_4d_scaled_dot_product_attention
def scaled_dot_product_attention(
    Q: torch.Tensor,
    K: torch.Tensor,
    V: torch.Tensor,
    mask: torch.Tensor = None,
) -> torch.Tensor:
    D = Q.size(-1)
    scores = torch.matmul(Q, K.transpose(-2, -1)) / math.sqrt(D)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float('-inf'))
    attn_weights = softmax(scores, dim=-1)
    output = torch.matmul(attn_weights, V)
    return output
