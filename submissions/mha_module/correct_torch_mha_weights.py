# CORRECT: nn.MultiheadAttention inside a small module that returns what it returns, (out, weights): need_weights
# left at True and average_attn_weights at True, so the weights are the heads' mean [B, T, T], which the mha_module
# rubric accepts beside the output (weights optional, issue 32). Build: CausalSelfAttention(d_model, num_heads,
# dropout=0.1, bias=True); weights: attn.in_proj_weight [3d, d] (q|k|v rows), attn.in_proj_bias, attn.out_proj.
import torch
import torch.nn as nn


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1, bias=True):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, num_heads, dropout=dropout, bias=bias, batch_first=True)

    def forward(self, x):
        T = x.shape[-2]
        future = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
        return self.attn(x, x, x, attn_mask=future)
