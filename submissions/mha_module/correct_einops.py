# CORRECT: Raschka's constructor, MultiHeadAttention(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False),
# written with einops and a mask sliced from a registered buffer that grows when T exceeds it (so any T), on x's
# device. W_query, W_key, W_value [d_out, d_in] (biases when qkv_bias), out_proj with bias; x is [..., T, d_in].
import torch
import torch.nn as nn
from einops import einsum, rearrange


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        self.num_heads = num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        future = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), 1)
        self.register_buffer("mask", future, persistent=False)

    def forward(self, x):
        T = x.shape[-2]
        if self.mask.shape[0] < T:
            self.mask = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), 1)
        q, k, v = (rearrange(w(x), "... t (h d) -> ... h t d", h=self.num_heads)
                   for w in (self.W_query, self.W_key, self.W_value))
        scores = einsum(q, k, "... h i d, ... h j d -> ... h i j") / q.shape[-1] ** 0.5
        scores = scores.masked_fill(self.mask[:T, :T].to(x.device), float("-inf"))
        weights = self.dropout(torch.softmax(scores, dim=-1))
        out = einsum(weights, v, "... h i j, ... h j d -> ... h i d")
        return self.out_proj(rearrange(out, "... h t d -> ... t (h d)"))
