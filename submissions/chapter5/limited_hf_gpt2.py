# LIMITED (layout, public): huggingface/transformers, src/transformers/models/gpt2/modeling_gpt2.py, GPT2Attention._attn (v4.3x,
# before eager_attention_forward), with the least adaptation: the registered `bias` buffer ([1, 1, N, N] bool) is a
# module constant moved to q's device as a buffer would be, scale_attn_weights on, no head mask, and the causal flag.
# It scales by value.size(-1) ** 0.5, the value size: right in GPT-2 and under chapter 5's contract (one size H).
# A layout limitation: 3-D inputs come back 4-D through the [1, 1, T, T] mask, which costs output_shape alone.
import torch
from torch import nn

max_positions = 64
bias = torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool)).view(1, 1, max_positions, max_positions)


def attention(query, key, value, causal=True):
    attn_weights = torch.matmul(query, key.transpose(-1, -2))
    attn_weights = attn_weights / torch.full([], value.size(-1) ** 0.5, dtype=attn_weights.dtype, device=attn_weights.device)
    if causal:
        # if only "normal" attention layer implements causal mask
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = bias.to(query.device)[:, :, key_length - query_length : key_length, :key_length]
        mask_value = torch.finfo(attn_weights.dtype).min
        # Need to be a tensor, otherwise we get error: `RuntimeError: expected scalar type float but found double`.
        # Need to be on the same device, otherwise `RuntimeError: ..., x and y to be on the same device`
        mask_value = torch.full([], mask_value, dtype=attn_weights.dtype).to(attn_weights.device)
        attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
    attn_weights = nn.functional.softmax(attn_weights, dim=-1)
    # Downcast (if necessary) back to V's dtype (if in mixed-precision) -- No-Op otherwise
    attn_weights = attn_weights.type(value.dtype)
    attn_output = torch.matmul(attn_weights, value)
    return attn_output, attn_weights
