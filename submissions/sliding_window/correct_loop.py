# CORRECT: one query at a time over its slice of keys k[lo : i + 1], lo = max(0, i - window + 1); returns a dict.
import math

import torch


def sliding_window_attention(q, k, v, window):
    T, H = q.size(-2), q.size(-1)
    rows = []
    for i in range(T):
        lo = max(0, i - window + 1)
        s = q[..., i : i + 1, :] @ k[..., lo : i + 1, :].transpose(-2, -1) / math.sqrt(H)
        p = torch.softmax(s, dim=-1)
        before = p.new_zeros(*p.shape[:-1], lo)
        after = p.new_zeros(*p.shape[:-1], T - 1 - i)
        rows.append(torch.cat([before, p, after], dim=-1))
    weights = torch.cat(rows, dim=-2)
    return {"output": weights @ v, "weights": weights}
