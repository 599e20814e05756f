# LIMITED (layout): rasbt/LLMs-from-scratch, ch03/01_main-chapter-code/ch03.ipynb, MultiHeadAttention.forward, with
# the least adaptation: queries, keys, values come in as [b, num_heads, num_tokens, head_dim] (after their
# transpose(1, 2)), the registered `mask` buffer is a module constant moved to q's device as a buffer would be, no
# dropout, and the causal flag. `keys.transpose(2, 3)` needs 4-D inputs.
import torch

context_length = 64
mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)


def causal_attention(queries, keys, values, causal=True):
    num_tokens = queries.shape[-2]
    # Compute scaled dot-product attention (aka self-attention) with a causal mask
    attn_scores = queries @ keys.transpose(2, 3)  # Dot product for each head
    if causal:
        # Original mask truncated to the number of tokens and converted to boolean
        mask_bool = mask.to(queries.device).bool()[:num_tokens, :num_tokens]
        # Use the mask to fill attention scores
        attn_scores.masked_fill_(mask_bool, -torch.inf)
    attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
    context_vec = attn_weights @ values
    return context_vec, attn_weights
