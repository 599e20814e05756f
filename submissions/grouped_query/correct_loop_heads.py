# CORRECT: a loop over query heads, each with its key/value head h // group; returns a NamedTuple.
import math
from typing import NamedTuple

import torch


class Attention(NamedTuple):
    out: torch.Tensor
    weights: torch.Tensor


def grouped_query_attention(q, k, v):
    Hq, T, D = q.shape[1:]
    group = Hq // k.shape[1]
    mask = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
    outs, weights = [], []
    for h in range(Hq):
        kh, vh = k[:, h // group], v[:, h // group]
        scores = q[:, h] @ kh.transpose(-2, -1) / math.sqrt(D)
        w = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
        outs.append(w @ vh)
        weights.append(w)
    return Attention(torch.stack(outs, dim=1), torch.stack(weights, dim=1))
