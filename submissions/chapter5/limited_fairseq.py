# LIMITED (layout): facebookresearch/fairseq, fairseq/modules/multihead_attention.py, MultiheadAttention.forward
# (the attention core after the projections) with the future mask of TransformerDecoder.buffered_future_mask, with
# the least adaptation: q, k, v come in as fairseq's [bsz * num_heads, tgt_len, head_dim], `q *= self.scaling` on
# the projection becomes `q = q * scaling` (here q is the caller's tensor), no dropout, and the causal flag.
# torch.bmm takes 3-D inputs only; the softmax runs in float32 (utils.softmax) and is cast back: a note on float64.
import torch
import torch.nn.functional as F


def fill_with_neg_inf(t):
    """FP16-compatible function that fills a tensor with -inf (fairseq/utils.py)."""
    return t.float().fill_(float("-inf")).type_as(t)


def buffered_future_mask(tensor):
    dim = tensor.size(1)
    return torch.triu(fill_with_neg_inf(torch.zeros([dim, dim])), 1).to(tensor)


def attention(q, k, v, causal=True):
    head_dim = q.size(-1)
    scaling = head_dim**-0.5
    q = q * scaling
    attn_weights = torch.bmm(q, k.transpose(1, 2))
    if causal:
        attn_mask = buffered_future_mask(q)
        attn_weights += attn_mask.unsqueeze(0)
    attn_weights_float = F.softmax(attn_weights, dim=-1, dtype=torch.float32)
    attn_weights = attn_weights_float.type_as(attn_weights)
    attn = torch.bmm(attn_weights, v)
    return attn, attn_weights
