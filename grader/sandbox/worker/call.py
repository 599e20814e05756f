"""One call of the student's function, as a request frame describes it: its inputs decoded (on the device asked
for, as leaves when gradients are asked for), the function run (traced on the simulated device), the result
adapted and checked, and the tensors (or gradients, or devices) to send back."""

from __future__ import annotations

import random

import torch

from grader.sandbox import wire
from grader.sandbox.worker import returns
from grader.sandbox.worker.device_trace import DeviceTrace
from grader.sandbox.worker.errors import BadOutput, DeviceError


def call(fn, parts: list[dict], req: dict, payload: bytes) -> tuple[dict, bytes]:
    device = req.get("device", "cpu")
    seed = req.get("seed", 0)
    if torch.cuda.is_available() or torch.backends.mps.is_available():
        torch.manual_seed(seed)
    else:  # the same seed: torch.manual_seed would also format a stack for CUDA's lazy seeding, each call
        torch.default_generator.manual_seed(seed)
    random.seed(seed)
    tensors = wire.unpack(req["tensors"], payload)
    grad = req.get("grad", False)
    grad_out = tensors.pop() if grad else None  # the last tensor is d(loss)/d(out)

    def arguments():
        args = [wire.decode(a, tensors) for a in req["args"]]
        kwargs = {k: wire.decode(a, tensors) for k, a in req.get("kwargs", {}).items()}
        # an option named as one of the function's positional inputs (window) goes in its place, so the student's
        # own name for that parameter (window_size) does not matter
        for name in (req.get("names") or [])[len(args):]:
            if name not in kwargs:
                break
            args.append(kwargs.pop(name))
        return args, kwargs

    if device == "meta":
        # the same call on the CPU first, in this process (the worker or its meta twin alike), as a student's
        # notebook would have made it: state the function keeps, such as a mask cached by T, then meets q's device
        try:
            args, kwargs = arguments()
            fn(*args, **kwargs)
        except BaseException:  # noqa: BLE001 - what this call does wrong, the other checks report
            pass
    tensors = [t.to(device) for t in tensors]
    positional = [a["t"] for a in req["args"] if isinstance(a, dict) and "t" in a]
    leaves = []
    if grad:
        for i in positional:
            leaves.append(tensors[i].requires_grad_(True))
            tensors[i] = tensors[i].clone()  # like q_proj(x): not leaves
    inputs = list(tensors)
    args, kwargs = arguments()
    labels = [label for p in parts for label in p["labels"]]
    expect = req["expect"]
    if device == "meta":
        trace = DeviceTrace(device)
        with trace:
            returned = fn(*args, **kwargs)
        if trace.found:  # raised inside the function, and caught there
            raise DeviceError(trace.found[0])
    else:
        returned = fn(*args, **kwargs)
    got = returns.adapt(returned, parts, req.get("leading", False), len(req["expect"]))
    if len(got) >= 2 and expect[0] != expect[1] and [returns.shape_of(got[0]), returns.shape_of(got[1])] == [expect[1], expect[0]]:
        raise BadOutput(f"{labels[0]} has shape {tuple(expect[1])} and {labels[1]} {tuple(expect[0])}: "
                        f"({labels[1]}, {labels[0]}) returned in the wrong order? expected ({labels[0]}, {labels[1]})")
    results = [returns.checked(t, name, shape, device) for t, name, shape in zip(got, labels, expect)]
    if device == "meta":
        return {"ok": True, "devices": [t.device.type for t in results]}, b""
    if req.get("return_inputs"):
        results += inputs  # as the function left them
    if grad:
        out, named = results[0], req.get("names") or []
        # each leaf by the name of its position (a None among the positional inputs takes no leaf)
        names = [named[j] if j < len(named) else str(j) for j, a in enumerate(req["args"]) if isinstance(a, dict) and "t" in a]
        if not out.requires_grad:
            raise BadOutput(f"{labels[0]} does not require grad: it is not connected to {', '.join(names)} by autograd")
        # d/d(out) of sum(out * g) is exactly g; autograd.backward(out, g) would import sympy to check shapes
        assert grad_out is not None  # popped above when grad
        (out * grad_out.to(device=out.device, dtype=out.dtype)).sum().backward()
        missing = [n for n, leaf in zip(names, leaves) if leaf.grad is None]
        if missing:
            raise BadOutput(f"no gradient reaches {', '.join(missing)}", unreached=missing)
        results = [leaf.grad for leaf in leaves]
    specs, data = wire.pack([t.detach().to("cpu") for t in results])
    return {"ok": True, "tensors": specs}, data
