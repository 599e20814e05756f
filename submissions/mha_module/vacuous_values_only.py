# VACUOUS: each position returns c_proj of its own value (attention with identity weights): q and k are computed and
# ignored. Build and weights as correct_nanogpt_style.py.
from dataclasses import dataclass

import torch.nn as nn


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
        self.n_embd = config.n_embd
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)

    def forward(self, x):
        q, k, v = self.c_attn(x).split(self.n_embd, dim=-1)
        return self.c_proj(v)
