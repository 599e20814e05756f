# LIMITED (layout): karpathy/nanoGPT, model.py, CausalSelfAttention.forward (the manual path without flash), with
# the least adaptation: q, k, v come in already split into heads, the registered `bias` buffer (a [1, 1, N, N]
# causal mask) is a module constant moved to q's device as a module's buffer would be, and the causal flag.
# Right on every [B, heads, T, H] input; a 3-D input broadcasts against the [1, 1, T, T] mask and comes back 4-D.
import math

import torch
import torch.nn.functional as F

block_size = 64
bias = torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size)


def scaled_dot_product_attention(q, k, v, causal=True):
    T = q.size(-2)
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    if causal:
        att = att.masked_fill(bias.to(q.device)[:, :, :T, :T] == 0, float("-inf"))
    att = F.softmax(att, dim=-1)
    y = att @ v  # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
    return y, att
