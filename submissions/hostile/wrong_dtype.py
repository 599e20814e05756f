# HOSTILE (garbage return): correct shapes, integer dtype. Expected: `output_shape` fails ("dtype torch.int64").
import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    T = q.size(-2)
    return torch.zeros(q.shape, dtype=torch.int64), torch.zeros(*q.shape[:-2], T, T, dtype=torch.int64)
