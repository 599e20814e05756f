# BUG (public): pytorch/pytorch, the reference implementation in the docs of torch.nn.functional.
# scaled_dot_product_attention ("efficient implementation equivalent to the following"), with the least
# adaptation: no dropout, no attn_mask, weights returned. Its `temp_mask = torch.ones(L, S, dtype=torch.bool)`
# lives on the CPU, and `attn_bias.masked_fill_(temp_mask.logical_not(), ...)` mixes it with a bias on q's device:
# CUDA raises there.
import math

import torch


def scaled_dot_product_attention(query, key, value, causal=True, scale=None):
    L, S = query.size(-2), key.size(-2)
    scale_factor = 1 / math.sqrt(query.size(-1)) if scale is None else scale
    attn_bias = torch.zeros(L, S, dtype=query.dtype, device=query.device)
    if causal:
        temp_mask = torch.ones(L, S, dtype=torch.bool).tril(diagonal=0)
        attn_bias.masked_fill_(temp_mask.logical_not(), float("-inf"))
        attn_bias.to(query.dtype)
    attn_weight = query @ key.transpose(-2, -1) * scale_factor
    attn_weight += attn_bias
    attn_weight = torch.softmax(attn_weight, dim=-1)
    return attn_weight @ value, attn_weight
