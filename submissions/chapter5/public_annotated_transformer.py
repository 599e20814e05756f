# CORRECT (public): harvardnlp/annotated-transformer, the_annotated_transformer.py, `attention` and
# `subsequent_mask`, with the least adaptation: the causal flag builds subsequent_mask(T) (moved to q's device, as
# Batch.make_std_mask does with type_as), no dropout. The [1, T, T] mask broadcasts over any leading dims; the -1e9
# fill gives exactly 0 weight in float32 and float64.
import math

import torch


def subsequent_mask(size):
    "Mask out subsequent positions."
    attn_shape = (1, size, size)
    subsequent_mask = torch.triu(torch.ones(attn_shape), diagonal=1).type(torch.uint8)
    return subsequent_mask == 0


def attention(query, key, value, causal=True, dropout=None):
    "Compute 'Scaled Dot Product Attention'"
    mask = subsequent_mask(query.size(-2)).to(query.device) if causal else None
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    if dropout is not None:
        p_attn = dropout(p_attn)
    return torch.matmul(p_attn, value), p_attn
