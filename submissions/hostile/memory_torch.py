# HOSTILE: allocates 256 MiB tensors until something gives. Expected: `output_shape` fails with
# "memory limit exceeded" (the worker's address-space limit), the machine unharmed.
import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    hoard = []
    while True:
        hoard.append(torch.ones(64 << 20))
