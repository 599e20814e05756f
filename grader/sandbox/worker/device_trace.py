"""The device check's trace: every aten op a function runs on the simulated device, so that mixing devices fails
here as it would on CUDA (meta tensors alone accept it silently)."""

from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode  # a private module of torch's
from torch.utils._pytree import tree_leaves

from grader.sandbox.worker.errors import DeviceError

# ops whose job is to move or index across devices (x.to(q.device), t.copy_(cpu), x[cpu_index]): CUDA allows them
_MAY_MIX = {"copy_", "_to_copy", "_copy_from", "_copy_from_and_resize", "to", "index", "index_put_", "_index_put_impl_",
            "lift_fresh", "lift_fresh_copy", "set_"}


class DeviceTrace(TorchDispatchMode):
    """Every aten op the function runs on the simulated device, in-place ones included: meta tensors accept
    `attn_bias += cpu_mask` and `meta @ cpu` silently, CUDA does not (only 0-dim CPU tensors may mix)."""

    def __init__(self, device: str):
        super().__init__()
        self.device = device
        self.found: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func.overloadpacket.__name__ == "copy_" and _into_other(args, self.device):
            return args[0]  # simulated data into a CPU tensor (load_state_dict): CUDA copies it; meta has none to copy
        if func.overloadpacket.__name__ not in _MAY_MIX:
            tensors = [a for a in tree_leaves((args, kwargs)) if isinstance(a, torch.Tensor)]
            if any(t.device.type == self.device for t in tensors):
                other = next((t for t in tensors if t.device.type != self.device and t.dim() > 0), None)
                if other is not None:
                    self.found.append(
                        f"Expected all tensors to be on the same device, but found at least two devices, {self.device} "
                        f"(the inputs' device) and {other.device.type}: {func.overloadpacket.__name__} mixes the inputs' "
                        f"device with a {other.device.type} tensor of shape {tuple(other.shape)}"
                    )
                    raise DeviceError(self.found[-1])
        return func(*args, **kwargs)


def _into_other(args, device: str) -> bool:
    """copy_(dst, src) from the simulated device into a tensor elsewhere."""
    dst, src = (args + (None, None))[:2]
    return (isinstance(dst, torch.Tensor) and isinstance(src, torch.Tensor) and src.device.type == device
            and dst.device.type != device)
