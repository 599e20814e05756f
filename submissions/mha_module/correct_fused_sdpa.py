# CORRECT: nanoGPT-style module with one fused projection and F.scaled_dot_product_attention(is_causal=True), dropout
# only while training. Build: CausalSelfAttention(GPTConfig(n_embd=..., n_head=..., dropout=..., bias=...)); fused
# c_attn [3C, C] (q|k|v rows), c_proj; x is [..., T, C] (any batch dims).
from dataclasses import dataclass

import torch.nn as nn
import torch.nn.functional as F


@dataclass
class GPTConfig:
    block_size: int = 1024
    n_head: int = 4
    n_embd: int = 64
    dropout: float = 0.1
    bias: bool = True


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.n_head, self.dropout = config.n_head, config.dropout
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)

    def forward(self, x):
        q, k, v = (t.unflatten(-1, (self.n_head, -1)).transpose(-3, -2) for t in self.c_attn(x).chunk(3, dim=-1))
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=True)
        return self.c_proj(y.transpose(-3, -2).flatten(-2))
