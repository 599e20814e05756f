# CORRECT: nn.MultiheadAttention inside the Level 2 layer: the causal attn_mask (True = may NOT attend, torch MHA's
# convention) and key_padding_mask = (padding_mask == 0) (True = pad), need_weights=True and
# average_attn_weights=False for the [B, H, T, T] weights, and nan_to_num(0.0) on both results: torch's MHA gives NaN
# for a query that sees no key (a pad before the first real token). Build: MaskedSelfAttention(d_model, num_heads,
# dropout=0.1); weights: mha.in_proj_weight [3d, d] (q|k|v rows), mha.in_proj_bias, mha.out_proj.
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
        return out.nan_to_num(0.0), weights.nan_to_num(0.0)
