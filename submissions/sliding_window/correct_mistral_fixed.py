# CORRECT: the mask of mistralai/mistral-inference's one_file_ref.py (tril, triu to make it banded, then torch.log
# of the 0/1 mask: 0 where allowed, -inf elsewhere) with its diagonal moved to -(window - 1), so that query i sees
# exactly `window` keys, itself included.
import math

import torch


def sliding_window_attention(q, k, v, window):
    seqlen = q.size(-2)
    tensor = torch.full((seqlen, seqlen), fill_value=1, dtype=q.dtype, device=q.device)
    mask = torch.tril(tensor, diagonal=0)
    mask = torch.triu(mask, diagonal=-(window - 1))
    mask = torch.log(mask)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)) + mask
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
