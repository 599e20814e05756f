# HOSTILE: the planted-bug variants with no bug planted are the reference. It finds the grader's folder from the
# code that loads it (the call stack's file names, the worker's own functions through gc), reads
# exercises/chapter5.py, takes its `plant` function out with ast and runs it. If that works it returns the reference's tensors, otherwise zeros.
# Expected (every wall up, as root or as a normal user): every package of the grader but its sandbox is hidden
# from workers, so it earns what zeros earn.
import ast
import gc
import math
import os
import sys

import torch


def _folders() -> set[str]:
    files = set()
    frame = sys._getframe()
    while frame is not None:
        files.add(frame.f_code.co_filename)
        frame = frame.f_back
    files |= {obj.__code__.co_filename for obj in gc.get_objects() if type(obj).__name__ == "function"}
    found = set()
    for path in files:
        d = os.path.dirname(os.path.abspath(path))
        while d not in ("", "/") and d not in found:
            found.add(d)
            d = os.path.dirname(d)
    return found


def _steal():
    for d in sorted(_folders()):
        try:
            with open(os.path.join(d, "exercises", "chapter5.py")) as f:
                tree = ast.parse(f.read())
            plant = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "plant")
            namespace = {"torch": torch, "math": math}
            exec(compile(ast.Module([plant], []), "stolen", "exec"), namespace)
            return namespace["plant"]
        except Exception:
            continue
    return None


_PLANT = _steal()
print("STOLEN" if _PLANT else "NOT STOLEN", flush=True)


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    if _PLANT is not None:
        return _PLANT(q, k, v, causal)
    T = q.size(-2)
    return torch.zeros_like(q), torch.zeros(*q.shape[:-2], T, T, dtype=q.dtype)
