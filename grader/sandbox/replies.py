"""What a worker's reply says, read as data that is not trusted: its failure's kind, a bad result's shapes, why a
worker exited, a layer's layout; and the shapes a call agrees on in advance."""

from __future__ import annotations

import signal

from grader.sandbox import wire
from grader.sandbox.limits import Limits

FLOATS = {"float16", "bfloat16", "float32", "float64"}


def kind(reply: dict) -> wire.Kind:
    """A failed reply's kind; one the grader does not know (a forged frame) is a plain exception."""
    try:
        return wire.Kind(reply.get("kind", wire.Kind.EXCEPTION))
    except ValueError:
        return wire.Kind.EXCEPTION


def shapes(reply: dict) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """A bad result's (shape, agreed shape), checked: the worker's reply is data, not trusted."""
    shapes = reply.get("shapes")
    if (isinstance(shapes, list) and len(shapes) == 2 and all(isinstance(s, list) and len(s) <= 16 for s in shapes)
            and all(type(d) is int for s in shapes for d in s)):
        return tuple(shapes[0]), tuple(shapes[1])
    return None


def alternatives(expected) -> bool:
    """Whether an expected shape is a list of shapes the tensor may have (a layer's weights: [B, H, T, T], or
    [B, T, T] for one head)."""
    found = list(expected)
    return bool(found) and not isinstance(found[0], int)


def allowed(expected) -> list[list[int]]:
    return [list(s) for s in expected] if alternatives(expected) else [list(expected)]


def agreed(expected) -> list:
    """An expected shape, or its alternatives, as the call's header sends it."""
    return allowed(expected) if alternatives(expected) else list(expected)


def exit_reason(code: int | None, limits: Limits) -> str:
    if code is None:
        return "stopped answering"
    if code == wire.EXIT_MEMORY:
        return f"ran out of memory (memory limit exceeded: {limits.memory_mb} MiB)"
    if code < 0:
        sig = -code
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        if sig == signal.SIGXCPU:
            return f"was killed by {name}: CPU time limit exceeded"
        return f"was killed by {name}"
    return f"exited with status {code} (os._exit or sys.exit in the submission?)"


def layout(found: dict) -> dict:
    """A describe reply's layout (sandbox.worker.modules.Layer.describe), every field checked and cut to size."""
    text = lambda x, n=300: str(x)[:n]  # noqa: E731
    listed = lambda x: x if isinstance(x, list) else []  # noqa: E731
    mapping = lambda x: x if isinstance(x, dict) else {}  # noqa: E731
    whole = lambda x: x if type(x) is int and 0 <= x <= 1 << 20 else -1  # noqa: E731
    return {
        "class": text(found.get("class"), 80), "signature": text(found.get("signature")),
        "built": {text(k, 40): text(v, 40) for k, v in list(mapping(found.get("built")).items())[:20]},
        "parameters": [(text(p[0], 80), text(p[1], 40)) for p in listed(found.get("parameters"))[:40]
                       if isinstance(p, list) and len(p) == 2],
        "mapped": {text(k, 80): text(v, 80) for k, v in list(mapping(found.get("mapped")).items())[:40]},
        "present": [text(r, 8) for r in listed(found.get("present"))[:8]],
        "unmapped": [text(n, 80) for n in listed(found.get("unmapped"))[:20]],
        "problem": text(found.get("problem"), 1500),
        "heads": found.get("heads") is True,
        "positional": [text(n, 40) for n in listed(found.get("positional"))[:20]],
        "config": {text(k, 40): text(v, 40) for k, v in list(mapping(found.get("config")).items())[:100]},
        "by_key": found.get("by_key") is True,
        "padding": text(found.get("padding"), 40),
        "pieces": {text(n, 80): [(text(p[0], 8), whole(p[1]), whole(p[2])) for p in listed(parts)[:64]
                                 if isinstance(p, list) and len(p) == 3]
                   for n, parts in list(mapping(found.get("pieces")).items())[:40]},
    }
