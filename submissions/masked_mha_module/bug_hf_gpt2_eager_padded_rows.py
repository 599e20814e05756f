# BUG (adapted public): huggingface/transformers @ c44b2d9976e8eafbdcb89cb2710141b2bc9b138f,
# src/transformers/models/gpt2/modeling_gpt2.py, GPT2Attention's eager attention with HF's `attention_mask`, adapted
# as correct_hf_gpt2_eager.py is (nn.Linear for Conv1D, the causal mask per call, the [B, T] mask extended as
# GPT2Model does, the weights returned) but without its fix: a query that sees no key (a pad before the first real
# token) gets finfo.min on every key (finfo.min + finfo.min = -inf on the future's pads), so its softmax spreads the
# weight over the masked keys, the future's included. Finite, but not zero; the real tokens are right.
# Copyright 2018 The OpenAI Team Authors and HuggingFace Inc. team, under the Apache License 2.0.
import torch
from torch import nn


class GPT2Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embed_dim = config.hidden_size
        self.num_heads = config.num_attention_heads
        self.head_dim = self.embed_dim // self.num_heads
        self.split_size = self.embed_dim
        self.c_attn = nn.Linear(self.embed_dim, 3 * self.embed_dim)
        self.c_proj = nn.Linear(self.embed_dim, self.embed_dim)
        self.attn_dropout = nn.Dropout(config.attn_pdrop)
        self.resid_dropout = nn.Dropout(config.resid_pdrop)

    def _attn(self, query, key, value, attention_mask=None):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        attn_weights = attn_weights / torch.full(
            [], value.size(-1) ** 0.5, dtype=attn_weights.dtype, device=attn_weights.device
        )
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = torch.ones(key_length, key_length, dtype=torch.bool, device=query.device).tril()
        causal_mask = causal_mask[None, None, key_length - query_length : key_length, :key_length]
        mask_value = torch.finfo(attn_weights.dtype).min
        mask_value = torch.full([], mask_value, dtype=attn_weights.dtype, device=attn_weights.device)
        attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
        allowed = causal_mask
        if attention_mask is not None:
            # Apply the attention mask
            extended = (1.0 - attention_mask[:, None, None, :].to(attn_weights.dtype)) * mask_value
            attn_weights = attn_weights + extended
            allowed = allowed & attention_mask[:, None, None, :].bool()
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_weights = attn_weights.type(value.dtype)
        attn_weights = self.attn_dropout(attn_weights)
        attn_output = torch.matmul(attn_weights, value)
        return attn_output, attn_weights

    def _split_heads(self, tensor, num_heads, attn_head_size):
        new_shape = tensor.size()[:-1] + (num_heads, attn_head_size)
        tensor = tensor.view(new_shape)
        return tensor.permute(0, 2, 1, 3)  # (batch, head, seq_length, head_features)

    def _merge_heads(self, tensor, num_heads, attn_head_size):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        new_shape = tensor.size()[:-2] + (num_heads * attn_head_size,)
        return tensor.view(new_shape)

    def forward(self, hidden_states, attention_mask=None):
        query, key, value = self.c_attn(hidden_states).split(self.split_size, dim=2)
        query = self._split_heads(query, self.num_heads, self.head_dim)
        key = self._split_heads(key, self.num_heads, self.head_dim)
        value = self._split_heads(value, self.num_heads, self.head_dim)
        attn_output, attn_weights = self._attn(query, key, value, attention_mask)
        attn_output = self._merge_heads(attn_output, self.num_heads, self.head_dim)
        attn_output = self.c_proj(attn_output)
        attn_output = self.resid_dropout(attn_output)
        return attn_output, attn_weights
