# BUG: "the prefix is bidirectional", so no mask at all: every query sees every key, the future included.
import math

import torch


def prefix_lm_attention(q, k, v, prefix_len):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
