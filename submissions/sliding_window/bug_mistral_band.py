# BUG: the mask of mistralai/mistral-inference's one_file_ref.py as it stands: torch.triu(mask, diagonal=-window)
# keeps j >= i - window, window + 1 keys; the exercise's window counts the query itself (i - window < j <= i).
import math

import torch


def sliding_window_attention(q, k, v, window):
    seqlen = q.size(-2)
    tensor = torch.full((seqlen, seqlen), fill_value=1, dtype=q.dtype, device=q.device)
    mask = torch.tril(tensor, diagonal=0)
    # make the mask banded to account for sliding window
    mask = torch.triu(mask, diagonal=-window)
    mask = torch.log(mask)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)) + mask
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
