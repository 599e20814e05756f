# Helper for the folder submission: boolean causal mask (True = allowed).
import torch


def causal_mask(T, device=None):
    """[T, T] bool mask, True where key j <= query i."""
    return torch.tril(torch.ones(T, T, dtype=torch.bool, device=device))
