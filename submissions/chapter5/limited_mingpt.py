# LIMITED (layout): karpathy/minGPT, mingpt/model.py, CausalSelfAttention.forward, with the least adaptation: q, k,
# v come in already split into heads, the registered `bias` buffer ([1, 1, N, N]) is a module constant moved to q's
# device as a buffer would be, dropout is off (eval mode), and the causal flag.
# Right on every [B, heads, T, H] input; 3-D inputs come back 4-D through the [1, 1, T, T] mask.
import math

import torch
import torch.nn.functional as F

block_size = 128
bias = torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size)


def attention(q, k, v, causal=True):
    T = q.size(-2)
    # causal self-attention; Self-attend: (B, nh, T, hs) x (B, nh, hs, T) -> (B, nh, T, T)
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    if causal:
        att = att.masked_fill(bias.to(q.device)[:, :, :T, :T] == 0, float("-inf"))
    att = F.softmax(att, dim=-1)
    y = att @ v  # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
    return y, att
