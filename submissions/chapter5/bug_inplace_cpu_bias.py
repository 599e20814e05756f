# BUG: the causal bias is built on the CPU and added in place to a bias on q's device (`attn_bias += cpu_mask`):
# meta tensors accept it silently, CUDA raises ("Expected all tensors to be on the same device").
import math

import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    T = q.size(-2)
    attn_bias = torch.zeros(T, T, dtype=q.dtype, device=q.device)
    if causal:
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        attn_bias += torch.zeros(T, T, dtype=q.dtype).masked_fill(future, float("-inf"))
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)) + attn_bias, dim=-1)
    return weights @ v, weights
