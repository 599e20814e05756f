# CORRECT: adapted from Hugging Face transformers' Llama attention (src/transformers/models/llama/modeling_llama.py,
# `repeat_kv` and `eager_attention_forward`, Apache-2.0). Changes: a function instead of a module, the additive
# causal mask (finfo.min above the diagonal) built here, the softmax kept in the inputs' dtype (the original
# computes it in float32, which float64 inputs would notice), no dropout, and the output left as [B, Hq, T, D].
import torch
from torch import nn


def repeat_kv(hidden_states: torch.Tensor, n_rep: int) -> torch.Tensor:
    # the equivalent of torch.repeat_interleave(x, dim=1, repeats=n_rep)
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


def grouped_query_attention(query, key, value):
    num_key_value_groups = query.shape[1] // key.shape[1]
    scaling = query.shape[-1] ** -0.5
    seq_len = query.shape[-2]
    attention_mask = torch.full((seq_len, seq_len), torch.finfo(query.dtype).min, dtype=query.dtype, device=query.device)
    attention_mask = torch.triu(attention_mask, diagonal=1)[None, None]

    key_states = repeat_kv(key, num_key_value_groups)
    value_states = repeat_kv(value, num_key_value_groups)

    attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
    causal_mask = attention_mask[:, :, :, : key_states.shape[-2]]
    attn_weights = attn_weights + causal_mask

    attn_weights = nn.functional.softmax(attn_weights, dim=-1)
    attn_output = torch.matmul(attn_weights, value_states)
    return attn_output, attn_weights
