# CORRECT (public): facebookresearch/fairseq, fairseq/modules/multihead_attention.py, MultiheadAttention.forward
# (the attention core after the projections) with TransformerDecoder.buffered_future_mask, with the least
# adaptation: [B, heads, T, Dk] viewed as fairseq's [bsz * num_heads, tgt_len, head_dim], key_padding_mask made
# from the exercise's padding_mask (fairseq's is 1 = pad), `q *= self.scaling` on the projection as `q = q * scaling`
# (here q is the caller's tensor), no dropout; and, as the course text asks, a query that sees no key gets zeros
# (fairseq gives NaN there). The softmax runs in float32 (utils.softmax) and is cast back: a note on float64.
import torch
import torch.nn.functional as F


def fill_with_neg_inf(t):
    """FP16-compatible function that fills a tensor with -inf (fairseq/utils.py)."""
    return t.float().fill_(float("-inf")).type_as(t)


def masked_self_attention(query, key, value, padding_mask=None):
    bsz, num_heads, tgt_len, head_dim = query.shape
    src_len = tgt_len
    scaling = head_dim**-0.5
    q = query.contiguous().view(bsz * num_heads, tgt_len, head_dim) * scaling
    k = key.contiguous().view(bsz * num_heads, src_len, head_dim)
    v = value.contiguous().view(bsz * num_heads, src_len, value.size(-1))
    attn_weights = torch.bmm(q, k.transpose(1, 2))
    attn_mask = torch.triu(fill_with_neg_inf(torch.zeros([tgt_len, tgt_len])), 1).to(attn_weights)
    attn_weights += attn_mask.unsqueeze(0)
    attn_weights = attn_weights.view(bsz, num_heads, tgt_len, src_len)
    key_padding_mask = padding_mask == 0 if padding_mask is not None else None
    if key_padding_mask is not None:
        attn_weights = attn_weights.masked_fill(key_padding_mask.unsqueeze(1).unsqueeze(2).to(torch.bool), float("-inf"))
    attn_weights_float = F.softmax(attn_weights, dim=-1, dtype=torch.float32)
    attn_weights = attn_weights_float.type_as(attn_weights)
    attn_weights = torch.nan_to_num(attn_weights, nan=0.0)  # adaptation: a row that sees no key is zeros, not NaN
    attn = torch.bmm(attn_weights.view(bsz * num_heads, tgt_len, src_len), v)
    return attn.view(bsz, num_heads, tgt_len, -1), attn_weights
