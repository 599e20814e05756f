# CORRECT (public): harvardnlp/annotated-transformer, the_annotated_transformer.py, `attention`, `subsequent_mask`
# and Batch.make_std_mask, with the least adaptation: the target mask is made from the exercise's padding_mask
# ([B, T], 1 = real token) as make_std_mask makes it (pad mask & subsequent_mask), unsqueezed for the heads as
# MultiHeadedAttention does, no dropout; and, as the course text asks, a query that sees no key gets zeros (with the
# -1e9 fill its row would spread over the masked keys).
import math

import torch


def subsequent_mask(size):
    "Mask out subsequent positions."
    attn_shape = (1, size, size)
    subsequent_mask = torch.triu(torch.ones(attn_shape), diagonal=1).type(torch.uint8)
    return subsequent_mask == 0


def attention(query, key, value, mask=None, dropout=None):
    "Compute 'Scaled Dot Product Attention'"
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    if dropout is not None:
        p_attn = dropout(p_attn)
    return torch.matmul(p_attn, value), p_attn


def masked_self_attention(query, key, value, padding_mask=None):
    T = query.size(-2)
    tgt_mask = subsequent_mask(T).to(query.device)
    if padding_mask is not None:
        tgt_mask = (padding_mask != 0).unsqueeze(-2) & tgt_mask  # make_std_mask: [B, 1, T] & [1, T, T]
    mask = tgt_mask.unsqueeze(1)  # Same mask applied to all h heads.
    _, p_attn = attention(query, key, value, mask=mask)
    p_attn = p_attn.masked_fill(~mask.any(-1, keepdim=True), 0.0)  # adaptation: a row that sees no key is zeros
    return torch.matmul(p_attn, value), p_attn
