# BUG: correct_torch_mha_padding.py returning nn.MultiheadAttention's results as they are: a query that sees no key
# (a pad before the first real token, or a sequence of pads) gets NaN weights and a NaN output, which spread into the
# loss.
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
                                need_weights=True, average_attn_weights=False)
        return out, weights
