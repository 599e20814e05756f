import torch


def additive_causal_bias(size, like):
    """0 where a query may look, -inf above the diagonal."""
    return torch.full((size, size), float('-inf'), dtype=like.dtype, device=like.device).triu(diagonal=1)
