# LIMITED (layout): rasbt/LLMs-from-scratch, ch03/01_main-chapter-code/ch03.ipynb, CausalAttention.forward (the
# single-head class), with the least adaptation: queries, keys, values come in projected, the registered `mask`
# buffer is a module constant moved to q's device as a buffer would be, no dropout, and the causal flag.
# `keys.transpose(1, 2)` is right for [b, num_tokens, d] only: 4-D inputs do not work.
import torch

context_length = 64
mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)


def causal_attention(queries, keys, values, causal=True):
    b, num_tokens, d_in = queries.shape
    attn_scores = queries @ keys.transpose(1, 2)  # Changed transpose
    if causal:
        attn_scores.masked_fill_(  # New, _ ops are in-place
            mask.to(queries.device).bool()[:num_tokens, :num_tokens], -torch.inf)  # `:num_tokens` to account for cases where the number of tokens in the batch is smaller than the supported context_size
    attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
    context_vec = attn_weights @ values
    return context_vec, attn_weights
