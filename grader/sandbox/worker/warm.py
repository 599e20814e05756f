"""torch's first-use costs (autograd, kernels, the meta kernels and sympy), paid once in the fork server (or the
meta twin) instead of in every call of every worker. Importing this module warms the CPU."""

from __future__ import annotations

import torch

from grader.sandbox.worker import lazy_dynamo

torch.set_num_threads(1)  # before any op: a fork after a parallel op deadlocks


def _warm_up(device: str) -> None:
    """Pay torch's first-use costs on `device` (autograd, kernels) once, not in every call."""
    for dtype in (torch.float32, torch.float64):
        q = torch.ones(1, 2, 2, dtype=dtype, device=device, requires_grad=device == "cpu")
        mask = torch.ones(2, 2, dtype=torch.bool, device=device).triu(1)
        w = torch.softmax((q @ q.transpose(-2, -1) / 2**0.5).masked_fill(mask, float("-inf")), dim=-1)
        out = torch.einsum("bij,bjh->bih", w, q) + torch.where(mask, 0.0, w) @ q
        if device == "cpu":
            out.sum().backward()


_warm_up("cpu")
meta_warm = False  # True in a fork server that preloaded worker.preload_meta, and so in its workers


def warm_meta() -> None:
    """torch's first meta-device op imports the meta kernels and sympy: pay it once per process."""
    global meta_warm
    try:
        lazy_dynamo.dynamo_only_once_imported()
        _warm_up("meta")
        torch.ones(2, device="meta").masked_fill(torch.ones(2, dtype=torch.bool), 0.0)
    except RuntimeError:
        pass
    finally:
        meta_warm = True
