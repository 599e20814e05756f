# CORRECT (public): lucidrains/x-transformers, x_transformers/attend.py, Attend.forward (the non-flash path) and
# create_causal_mask, with the least adaptation: the key padding mask as x-transformers takes it ([b, j] bool,
# True = keep, rearranged to 'b 1 1 j'), default scale; and, as the course text asks, a query that sees no key gets
# zeros. The softmax runs in float32 and is cast back: float32 precision on float64 inputs, a note, not a loss.
from functools import partial

import torch
import torch.nn.functional as F
from torch import einsum


def create_causal_mask(i, j, device):
    return torch.ones((i, j), device=device, dtype=torch.bool).triu(j - i + 1)


def masked_self_attention(query, key, value, padding_mask=None):
    q, k, v = query, key, value
    scale = q.shape[-1] ** -0.5
    dtype = q.dtype
    sim = einsum("b h i d, b h j d -> b h i j", q, k) * scale
    i, j, device = *sim.shape[-2:], q.device
    mask_value = -torch.finfo(sim.dtype).max
    keep = ~create_causal_mask(i, j, device=device)
    if padding_mask is not None:
        mask = padding_mask.bool()[:, None, None, :]  # rearrange(mask, 'b j -> b 1 1 j')
        sim = sim.masked_fill(~mask, mask_value)
        keep = keep & mask
    causal_mask = create_causal_mask(i, j, device=device)
    sim = sim.masked_fill(causal_mask, mask_value)
    attn_fn = partial(F.softmax, dtype=torch.float32)
    attn = attn_fn(sim, dim=-1)
    attn = attn.type(dtype)
    attn = attn.masked_fill(~keep.any(-1, keepdim=True), 0.0)  # adaptation: a row that sees no key is zeros
    out = einsum("b h i j, b h j d -> b h i d", attn, v)
    return out, attn
