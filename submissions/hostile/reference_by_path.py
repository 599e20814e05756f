# HOSTILE: goes around the import blocker to get the grader's reference: it asks every finder in sys.meta_path
# directly (editable installs map package names to folders), walks the call stack for the grader's own files and
# reads reference/chapter5.py from the folders around them, and erases the blocker's record of refused imports.
# If any of that works it returns the reference's tensors, otherwise zeros.
# Expected as root: the reference is hidden from workers (an empty folder in their private view), so it earns what
# zeros earn. Without root the reference cannot be hidden: the report's environment lines say so.
import gc
import os
import sys

import torch


def _folders() -> set[str]:
    found = {p for p in sys.path if p}
    frame = sys._getframe()
    while frame is not None:
        path = frame.f_globals.get("__file__") or ""
        d = os.path.dirname(os.path.abspath(path)) if path else ""
        while d not in ("", "/"):
            found.add(d)
            d = os.path.dirname(d)
        frame = frame.f_back
    for finder in sys.meta_path:
        mapping = getattr(sys.modules.get(getattr(finder, "__module__", ""), None), "MAPPING", None)
        if isinstance(mapping, dict):
            found |= {os.path.dirname(str(p)) for p in mapping.values()}
    return found


def _steal():
    for d in sorted(_folders()):
        path = os.path.join(d, "reference", "chapter5.py")
        try:
            with open(path) as f:
                code = f.read()
            namespace = {"__name__": "stolen"}
            exec(compile(code, path, "exec"), namespace)
            return namespace["scaled_dot_product_attention"]
        except Exception:
            continue
    return None


for obj in gc.get_objects():
    if isinstance(obj, type) and isinstance(getattr(obj, "attempts", None), list):
        obj.attempts.clear()
_REFERENCE = _steal()
print("STOLEN" if _REFERENCE else "NOT STOLEN", flush=True)


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    if _REFERENCE is not None:
        return _REFERENCE(q, k, v, causal)
    T = q.size(-2)
    return torch.zeros_like(q), torch.zeros(*q.shape[:-2], T, T, dtype=q.dtype)
