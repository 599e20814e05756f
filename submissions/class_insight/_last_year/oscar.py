# Last year's class: a solution the teacher keeps, to compare this year's with (--compare-with _last_year).
import torch


def scaled_dot_product_attention(q, k, v, causal=True):
    n, width = q.shape[-2], q.shape[-1]
    # every query against every key, one broadcast product at a time
    pairwise = (q.unsqueeze(-2) * k.unsqueeze(-3)).sum(dim=-1) * width ** -0.5
    if causal:
        later = torch.arange(n, device=q.device)[None, :] > torch.arange(n, device=q.device)[:, None]
        pairwise = pairwise.masked_fill(later, torch.finfo(pairwise.dtype).min)
    share = pairwise.softmax(dim=-1)
    mixed = (share.unsqueeze(-1) * v.unsqueeze(-3)).sum(dim=-2)
    return mixed, share
