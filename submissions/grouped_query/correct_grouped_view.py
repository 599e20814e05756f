# CORRECT: no copy of k and v: q viewed as [B, Hkv, group, T, D] against k, v broadcast over the group; returns a dict.
import math

import torch


def grouped_query_attention(q, k, v):
    B, Hq, T, D = q.shape
    Hkv = k.size(1)
    qg = q.reshape(B, Hkv, Hq // Hkv, T, D)
    scores = torch.einsum("bhgid,bhjd->bhgij", qg, k) / math.sqrt(D)
    i = torch.arange(T, device=q.device)
    allowed = i[None, :] <= i[:, None]
    scores = torch.where(allowed, scores, torch.tensor(float("-inf"), dtype=q.dtype, device=q.device))
    weights = torch.softmax(scores, dim=-1)
    out = torch.einsum("bhgij,bhjd->bhgid", weights, v)
    return {"output": out.reshape(B, Hq, T, v.size(-1)), "weights": weights.reshape(B, Hq, T, T)}
