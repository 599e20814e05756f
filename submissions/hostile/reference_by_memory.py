# HOSTILE: looks through its own memory for the grader: every module and function the garbage collector can reach
# that comes from the grader's reference, rubrics, checks or grading code, inherited from whatever process its
# worker was forked from (`attention-grader check` forks its fork server from itself, to share torch's pages).
# If it finds the reference's function it returns the reference's tensors, otherwise zeros.
# Expected: nothing is found (the fork server is forked only from a process that has loaded none of it), so it earns
# what zeros earn.
import gc
import sys
import types

import torch

SECRET = ("grader.reference", "grader.rubrics", "grader.grading.", "grader.checks", "grader.exercises", "reference.")


def _found() -> tuple[list[str], object]:
    names, reference = set(), None
    gc.unfreeze()  # what a process froze before forking is out of get_objects' sight, not out of memory
    for obj in gc.get_objects():
        if isinstance(obj, types.ModuleType) and obj.__name__.startswith(SECRET):
            names.add(obj.__name__)
        elif isinstance(obj, types.FunctionType) and str(obj.__module__).startswith(SECRET):
            names.add(obj.__module__)
            if obj.__name__ == "scaled_dot_product_attention" and obj.__module__.endswith("chapter5"):
                reference = obj
    return sorted(names), reference


_NAMES, _REFERENCE = _found()
print("FOUND" if _NAMES else "NOTHING FOUND", _NAMES[:5], file=sys.stderr)


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    if _REFERENCE is not None:
        return _REFERENCE(q, k, v, causal)
    T = q.size(-2)  # as chapter5/vacuous_zeros.py
    return torch.zeros_like(q), torch.zeros(*q.shape[:-2], T, T, dtype=q.dtype, device=q.device)
