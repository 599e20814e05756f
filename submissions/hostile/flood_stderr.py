# HOSTILE: writes 300 MB to stderr while loading, through sys.stderr and straight to file descriptor 2 (ignoring
# the errors once the output is full); its tensors are correct.
# Expected: as flood_stdout.py: output capped, report small, full marks for the tensors.
import math
import os
import sys

import torch

CHUNK = "e" * (1 << 20)
for _ in range(150):
    sys.stderr.write(CHUNK)
    try:
        os.write(2, CHUNK.encode())
    except OSError:
        pass


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    T, H = q.size(-2), q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(H)
    if causal:
        tril = torch.tril(torch.ones(T, T, dtype=torch.bool, device=q.device))
        scores = scores.masked_fill(~tril, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
