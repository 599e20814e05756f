# CORRECT: absolute positions (new query i is at P + i) compared with the keys' positions; returns a NamedTuple.
import math
from typing import NamedTuple

import torch


class Attention(NamedTuple):
    out: torch.Tensor
    weights: torch.Tensor
    cache: tuple


def cached_attention(q, k, v, cache=None):
    past = 0 if cache is None else cache[0].size(-2)
    k_all = k if cache is None else torch.cat([cache[0], k], dim=-2)
    v_all = v if cache is None else torch.cat([cache[1], v], dim=-2)
    q_pos = past + torch.arange(q.size(-2), device=q.device)
    k_pos = torch.arange(k_all.size(-2), device=q.device)
    scores = torch.einsum("bhid,bhjd->bhij", q, k_all) / math.sqrt(q.size(-1))
    scores = torch.where(k_pos[None, :] <= q_pos[:, None], scores, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return Attention(torch.einsum("bhij,bhjd->bhid", weights, v_all), weights, (k_all, v_all))
