# LIMITED (layout): meta-llama/llama, llama/model.py, Attention.forward (and the mask of Transformer.forward), with
# the least adaptation: xq, keys, values come in as [bs, n_heads, seqlen, head_dim] (after their transpose(1, 2)), no
# KV cache (start_pos = 0), and the causal flag. `keys.transpose(2, 3)` needs 4-D inputs; the softmax runs in
# float32 and is cast back (`.float()` ... `.type_as(xq)`), float32 precision on float64 inputs: a note, not a loss.
import math

import torch
import torch.nn.functional as F


def scaled_dot_product_attention(xq, keys, values, causal=True):
    seqlen, head_dim = xq.shape[-2], xq.shape[-1]
    mask = None
    if causal and seqlen > 1:
        mask = torch.full((seqlen, seqlen), float("-inf"), device=xq.device)
        mask = torch.triu(mask, diagonal=1).type_as(xq)
    scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(head_dim)
    if mask is not None:
        scores = scores + mask  # (bs, n_local_heads, seqlen, cache_len + seqlen)
    scores = F.softmax(scores.float(), dim=-1).type_as(xq)
    output = torch.matmul(scores, values)  # (bs, n_local_heads, seqlen, head_dim)
    return output, scores
