# LIMITED (layout): d2l-ai/d2l-en, d2l/torch.py, DotProductAttention.forward and masked_softmax, with the least
# adaptation: the causal mask as d2l's decoder makes it in training (dec_valid_lens = arange(1, num_steps + 1)
# repeated over the batch), no dropout, and the causal flag. torch.bmm takes 3-D inputs only. The -1e6 fill is
# d2l's own; it gives exactly 0 weight at the scores of this exercise.
import math

import torch
from torch import nn


def masked_softmax(X, valid_lens):
    """Perform softmax operation by masking elements on the last axis."""
    # X: 3D tensor, valid_lens: 1D or 2D tensor
    def _sequence_mask(X, valid_len, value=0):
        maxlen = X.size(1)
        mask = torch.arange((maxlen), dtype=torch.float32, device=X.device)[None, :] < valid_len[:, None]
        X[~mask] = value
        return X

    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    else:
        shape = X.shape
        if valid_lens.dim() == 1:
            valid_lens = torch.repeat_interleave(valid_lens, shape[1])
        else:
            valid_lens = valid_lens.reshape(-1)
        # On the last axis, replace masked elements with a very large negative value, whose exponentiation outputs 0
        X = _sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
        return nn.functional.softmax(X.reshape(shape), dim=-1)


def attention(queries, keys, values, causal=True):
    batch_size, num_steps, d = queries.shape
    valid_lens = torch.arange(1, num_steps + 1, device=queries.device).repeat(batch_size, 1) if causal else None
    # Swap the last two dimensions of keys with keys.transpose(1, 2)
    scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
    attention_weights = masked_softmax(scores, valid_lens)
    return torch.bmm(attention_weights, values), attention_weights
