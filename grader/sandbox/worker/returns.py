"""A result, whatever its return style (tuple, mapping, dataclass, NamedTuple), read into the exercise's parts by
their names, and each tensor checked against the shape agreed: plain tensors go back, never a student's subclass."""

from __future__ import annotations

import torch

from grader.sandbox.worker.errors import BadOutput, DeviceError


def _pick(result, names: list[str], what: str):
    if isinstance(result, dict):
        for n in names:
            if n in result:
                return result[n]
    else:
        for n in names:
            try:
                return getattr(result, n)
            except AttributeError:
                continue
    raise BadOutput(f"the result has no {what} (looked for {', '.join(names)})")


def adapt(result, parts: list[dict], leading: bool = False, asked: int | None = None) -> list:
    """The result's parts, flattened, from any of the return conventions in DESIGN.md. A part is
    {"labels": [...], "what": ..., "names": [...], "optional": bool}: one tensor per label (two for a KV cache), found
    by position in a tuple or by one of its names in a mapping or an object. An `optional` part (the weights a layer
    may return beside its output) may be missing, or None: a tensor alone, a shorter tuple, a mapping without it.
    `asked`: how many tensors the grader wants back (an optional part's only when a check looks at it), so the list
    may be shorter by the optional parts missing. `leading`: an output-only result's first element when it comes in
    a tuple (the grader charges that once, as a limitation)."""
    need = [p for p in parts if not p.get("optional")]
    expected = f"({', '.join(p['labels'][0] if len(p['labels']) == 1 else 'cache' for p in parts)})"
    alone = len(need) == 1 and len(need[0]["labels"]) == 1 and parts[0] is need[0]
    if isinstance(result, torch.Tensor) and alone:
        found = [result]  # an output-only function (CS336's adapters) returns the tensor itself
    elif leading and alone and isinstance(result, (tuple, list)) and result and isinstance(result[0], torch.Tensor):
        found = [result[0]]
    elif isinstance(result, (tuple, list)) and not hasattr(result, "_fields"):
        if not len(need) <= len(result) <= len(parts):
            raise BadOutput(f"returned a {type(result).__name__} of length {len(result)}, expected {expected}")
        found = list(result)
    elif result is None or isinstance(result, (str, bytes, int, float, torch.Tensor)):
        raise BadOutput(f"returned {type(result).__name__}, expected {expected}")
    else:
        found = []
        for p in parts:
            try:
                found.append(_pick(result, p["names"], p["what"]))
            except BadOutput:
                if not p.get("optional"):
                    raise
                break
    flat: list = []
    for p, value in zip(parts, found):
        if value is None and p.get("optional"):
            break  # nn.MultiheadAttention's (out, None) with need_weights=False: the optional part is missing
        if len(p["labels"]) == 1:
            flat.append(value)
        elif isinstance(value, (tuple, list)) and len(value) == len(p["labels"]):
            flat += list(value)
        else:
            raise BadOutput(f"the {p['what']} is a {type(value).__name__}, expected ({', '.join(p['labels'])})")
    return flat if asked is None else flat[:asked]


def shape_of(t) -> list[int] | None:
    if not isinstance(t, torch.Tensor):
        return None
    with torch._C.DisableTorchFunctionSubclass():
        return list(torch.Tensor.as_subclass(t, torch.Tensor).shape)


def shapes(expect: list) -> list[list[int]]:
    """The shapes one expected tensor may have: a shape ([2, 5, 8]), or a list of them (a layer's weights: [B, H, T,
    T], or [B, T, T] for one head)."""
    return [list(s) for s in expect] if expect and isinstance(expect[0], list) else [list(expect)]


def checked(t, name: str, shape: list, device: str) -> torch.Tensor:
    if not isinstance(t, torch.Tensor):
        raise BadOutput(f"{name} is a {type(t).__name__}, not a tensor")
    with torch._C.DisableTorchFunctionSubclass():
        t = torch.Tensor.as_subclass(t, torch.Tensor)
        got, allowed = list(t.shape), shapes(shape)
        if got not in allowed:
            said = " or ".join(str(tuple(s)) for s in allowed)
            raise BadOutput(f"{name} has shape {tuple(got)}, expected {said}", (got, allowed[0]))
        if not (t.is_floating_point()):
            raise BadOutput(f"{name} has dtype {t.dtype}, expected a floating dtype")
        if t.device.type != torch.device(device).type:
            raise DeviceError(f"{name} is on {t.device}, inputs were on {device}")
    return t
