# CORRECT: softmax in float32 whatever the input dtype (`.float()` then `.type_as(q)`, the production idiom of llama,
# fairseq and x-transformers): float64 inputs get float32 precision, which is full marks (the contract is float32)
# and a note in the feedback.
import math

import torch
import torch.nn.functional as F


def scaled_dot_product_attention(q, k, v, causal=True):
    T = q.size(-2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if causal:
        scores = scores.masked_fill(~torch.ones(T, T, dtype=torch.bool, device=q.device).tril(), float("-inf"))
    weights = F.softmax(scores.float(), dim=-1).type_as(q)
    return weights @ v, weights
