# BUG: forgets to divide the scores by sqrt(H).
import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    T = q.size(-2)
    scores = q @ k.transpose(-2, -1)
    if causal:
        tril = torch.tril(torch.ones(T, T, dtype=torch.bool, device=q.device))
        scores = scores.masked_fill(~tril, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    out = weights @ v
    return out, weights
