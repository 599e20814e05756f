import torch
import torch.nn.functional as F

from masks import additive_causal_bias


def scaled_dot_product_attention(q, k, v, causal=True):
    seq, hidden = q.shape[-2], q.shape[-1]
    out = q.matmul(k.transpose(-2, -1)).div(hidden ** 0.5)
    if causal:
        out = out + additive_causal_bias(seq, q)
    a = F.softmax(out, dim=-1)
    return a.matmul(v), a
