# HOSTILE: a long run of large matrix products inside torch's C++ kernels. Expected: "timed out after N s".
import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    a = torch.ones(1500, 1500)
    for _ in range(10**6):
        a = (a @ a).clamp_(max=1.0)
    return a, a
