# VACUOUS: every query returns the mean of all values, ignoring Q, K and the mask.
import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    mean = V.mean(dim=-2, keepdim=True)
    return mean.expand(*Q.shape[:-1], V.shape[-1]).clone()
