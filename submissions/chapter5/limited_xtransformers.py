# LIMITED (layout): lucidrains/x-transformers, x_transformers/attend.py, Attend.forward (the non-flash path) and
# create_causal_mask, with the least adaptation: the einsum of the multi-head case ('b h i d, b h j d'), default
# scale, no masks but the causal one, and the causal flag. The einsum needs 4-D inputs; the softmax runs in float32
# (partial(F.softmax, dtype=torch.float32)) and is cast back: a note on float64 inputs.
from functools import partial

import torch
import torch.nn.functional as F
from torch import einsum


def create_causal_mask(i, j, device):
    return torch.ones((i, j), device=device, dtype=torch.bool).triu(j - i + 1)


def attention(q, k, v, causal=True):
    n, heads, kv_heads, device = q.shape[-2], q.shape[1], k.shape[1], q.device
    scale = q.shape[-1] ** -0.5
    dtype = q.dtype
    sim = einsum("b h i d, b h j d -> b h i j", q, k) * scale
    i, j = sim.shape[-2:]
    mask_value = -torch.finfo(sim.dtype).max
    if causal:
        causal_mask = create_causal_mask(i, j, device=device)
        sim = sim.masked_fill(causal_mask, mask_value)
    attn_fn = partial(F.softmax, dtype=torch.float32)
    attn = attn_fn(sim, dim=-1)
    attn = attn.type(dtype)
    out = einsum("b h i j, b h j d -> b h i d", attn, v)
    return out, attn
