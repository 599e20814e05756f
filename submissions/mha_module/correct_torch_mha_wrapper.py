# CORRECT: nn.MultiheadAttention inside a small module, batch_first, with a bool attn_mask where True means "may NOT
# attend" (torch's MHA convention, the opposite of SDPA's), built per call on x's device; need_weights=False. Build:
# CausalSelfAttention(d_model, num_heads, dropout=0.1, bias=True); weights: attn.in_proj_weight [3d, d] (q|k|v rows),
# attn.in_proj_bias, attn.out_proj; x is [B, T, d].
import torch
import torch.nn as nn


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1, bias=True):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, num_heads, dropout=dropout, bias=bias, batch_first=True)

    def forward(self, x):
        T = x.shape[-2]
        future = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
        out, _ = self.attn(x, x, x, attn_mask=future, need_weights=False)
        return out
