# CORRECT: the keys query i sees are exactly 0 .. max(i + 1, prefix_len) - 1, so each (row, query) takes a softmax
# over that slice of keys; a [B] tensor gives each row its own length.
import math

import torch


def prefix_lm_attention(q, k, v, prefix_len):
    B, T, H = q.size(0), q.size(-2), q.size(-1)
    lengths = prefix_len.tolist() if torch.is_tensor(prefix_len) else [prefix_len] * B
    rows = []
    for b in range(B):
        queries = []
        for i in range(T):
            n = max(i + 1, lengths[b])
            s = q[b, ..., i : i + 1, :] @ k[b, ..., :n, :].transpose(-2, -1) / math.sqrt(H)
            p = torch.softmax(s, dim=-1)
            queries.append(torch.cat([p, p.new_zeros(*p.shape[:-1], T - n)], dim=-1))
        rows.append(torch.cat(queries, dim=-2))
    weights = torch.stack(rows)
    return weights @ v, weights
