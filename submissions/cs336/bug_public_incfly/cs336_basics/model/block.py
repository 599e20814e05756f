# BUG (public folder): incfly/assignment1-basics @ 44054a77500aac617c10c23161cddd1a9924e40a,
# cs336_basics/model/block.py, copied with nothing changed (MIT, the repository's LICENSE, Copyright 2025 Stanford
# University). The folder keeps only what the attention adapters import.
import torch
import torch.nn as nn
from torch import Tensor

from cs336_basics.model.attention import MultiheadSelfAttention
from cs336_basics.model.prenorm import RMSNorm
from cs336_basics.model.swiglu import SwiGLU


class TransformerBlock(nn.Module):
    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        max_seq_len: int,
        theta: float,
        device: torch.device | None = None,
        dtype: torch.dtype | None = None,
    ):
        super().__init__()
        self.attn = MultiheadSelfAttention(
            d_model=d_model,
            num_heads=num_heads,
            max_seq_len=max_seq_len,
            theta=theta,
            device=device,
            dtype=dtype,
        )
        self.ffn = SwiGLU(d_model=d_model, d_ff=d_ff, device=device, dtype=dtype)
        self.ln1 = RMSNorm(d_model=d_model, device=device, dtype=dtype)
        self.ln2 = RMSNorm(d_model=d_model, device=device, dtype=dtype)

    def forward(self, x: Tensor) -> Tensor:
        x = x + self.attn(self.ln1(x))
        x = x + self.ffn(self.ln2(x))
        return x


Block = TransformerBlock
