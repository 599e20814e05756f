# BUG: cuts the window from the wrong side: of the keys 0..i it keeps the first `window` ([:window]) instead of the
# last ones ([-window:]), so a late query sees the start of the sequence and not its own recent past.
import math

import torch


def sliding_window_attention(q, k, v, window):
    T, H = q.size(-2), q.size(-1)
    rows = []
    for i in range(T):
        keys = k[..., : i + 1, :][..., :window, :]
        n = keys.size(-2)
        s = q[..., i : i + 1, :] @ keys.transpose(-2, -1) / math.sqrt(H)
        p = torch.softmax(s, dim=-1)
        rows.append(torch.cat([p, p.new_zeros(*p.shape[:-1], T - n)], dim=-1))
    weights = torch.cat(rows, dim=-2)
    return weights @ v, weights
