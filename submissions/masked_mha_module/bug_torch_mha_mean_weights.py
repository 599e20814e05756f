# BUG: correct_torch_mha_padding.py with average_attn_weights left at its default (True): the weights returned are
# the heads' mean [B, T, T], not the Level 2 contract's [B, H, T, T] (the output is right).
import torch
import torch.nn as nn


class MaskedSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        self.mha = nn.MultiheadAttention(d_model, num_heads, dropout=dropout, batch_first=True)

    def forward(self, hidden_states, padding_mask=None):
        T = hidden_states.shape[1]
        future = torch.ones(T, T, dtype=torch.bool, device=hidden_states.device).triu(1)
        pads = None if padding_mask is None else padding_mask == 0
        out, weights = self.mha(hidden_states, hidden_states, hidden_states, attn_mask=future, key_padding_mask=pads,
                                need_weights=True)
        return out.nan_to_num(0.0), weights.nan_to_num(0.0)
