# CORRECT: a loop over the new queries, each a softmax over its visible keys 0 .. P + i, weight rows zero-padded;
# the cache comes back as a list.
import math

import torch
import torch.nn.functional as F


def cached_attention(q, k, v, cache=None):
    if cache is not None:
        k = torch.cat([cache[0], k], dim=-2)
        v = torch.cat([cache[1], v], dim=-2)
    T_new, T_all = q.size(-2), k.size(-2)
    outs, rows = [], []
    for i in range(T_new):
        seen = T_all - T_new + i + 1
        w = torch.softmax(q[..., i : i + 1, :] @ k[..., :seen, :].transpose(-2, -1) / math.sqrt(q.size(-1)), dim=-1)
        outs.append(w @ v[..., :seen, :])
        rows.append(F.pad(w, (0, T_all - seen)))
    return torch.cat(outs, dim=-2), torch.cat(rows, dim=-2), [k, v]
