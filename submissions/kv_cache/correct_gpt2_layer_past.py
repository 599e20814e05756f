# CORRECT: adapted from Hugging Face transformers' GPT-2 attention (src/transformers/models/gpt2/modeling_gpt2.py,
# `GPT2Attention.forward` with `layer_past` and `_attn`, Apache-2.0): the past concatenated before the new keys,
# `present = (key, value)`, and the causal mask as the bottom-right slice of a lower-triangular `bias` buffer.
# Changes: a function instead of a module (the buffer is a module constant, moved to the inputs' device), no
# dropout or head mask, scores scaled by the query's head size (GPT-2 takes value's, the same there).
import torch
from torch import nn

MAX_POSITIONS = 64
BIAS = torch.tril(torch.ones((MAX_POSITIONS, MAX_POSITIONS), dtype=torch.bool)).view(1, 1, MAX_POSITIONS, MAX_POSITIONS)


def _attn(query, key, value):
    attn_weights = torch.matmul(query, key.transpose(-1, -2))
    attn_weights = attn_weights / torch.full([], query.size(-1) ** 0.5, dtype=attn_weights.dtype, device=attn_weights.device)

    query_length, key_length = query.size(-2), key.size(-2)
    causal_mask = BIAS[:, :, key_length - query_length : key_length, :key_length].to(attn_weights.device)
    mask_value = torch.finfo(attn_weights.dtype).min
    mask_value = torch.full([], mask_value, dtype=attn_weights.dtype, device=attn_weights.device)
    attn_weights = torch.where(causal_mask, attn_weights, mask_value)

    attn_weights = nn.functional.softmax(attn_weights, dim=-1)
    attn_weights = attn_weights.type(value.dtype)
    attn_output = torch.matmul(attn_weights, value)
    return attn_output, attn_weights


def cached_attention(q, k, v, cache=None):
    if cache is not None:
        past_key, past_value = cache
        k = torch.cat((past_key, k), dim=-2)
        v = torch.cat((past_value, v), dim=-2)
    present = (k, v)
    attn_output, attn_weights = _attn(q, k, v)
    return {"output": attn_output, "weights": attn_weights, "present": present}
