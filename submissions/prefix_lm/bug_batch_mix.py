# BUG: hand-written softmax normalises over dims (0, -1), i.e. over keys AND the batch, so batch elements mix.
import math

import torch


def prefix_lm_attention(q, k, v, prefix_len):
    T = q.size(-2)
    j = torch.arange(T, device=q.device)
    if torch.is_tensor(prefix_len):
        prefix_len = prefix_len.to(q.device).view(-1, *([1] * (q.dim() - 1)))
    allowed = (j[None, :] <= j[:, None]) | (j < prefix_len)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    scores = scores.masked_fill(~allowed, float("-inf"))
    e = torch.exp(scores - scores.max())  # global max: fine for stability
    weights = e / e.sum(dim=(0, -1), keepdim=True)  # should be dim=-1 only
    return weights @ v, weights
