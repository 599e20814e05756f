# HOSTILE (garbage return): tensors that would need 100 GB each if made contiguous (expanded views of one number).
# Expected: `output_shape` fails ("has shape") at once; nothing is copied.
import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    huge = torch.zeros(1, dtype=q.dtype).expand(50_000, 50_000, 10)
    return huge, huge
