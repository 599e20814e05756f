# HOSTILE: monkeypatches everything that looks like the grader or a test runner: functions with suspicious names
# in every loaded module whose name mentions grader/pytest/hypothesis/_pytest, the same in the globals of every
# frame on the call stack (the worker's own code), the import blocker in sys.meta_path and any list that records
# blocked imports (found with gc), and pytest's assertion helpers. Returns zeros, as chapter5/vacuous_zeros.py.
# Expected: exactly the grade of chapter5/vacuous_zeros.py (the verdict is computed in another process).
import gc
import sys
import types

import torch

SUSPECT = ("check", "score", "grade", "verdict", "assert", "compare", "approx", "fail", "skip", "valid", "policy")


def _pass_through(*args, **kwargs):
    return args[0] if args else True


def _patch(namespace: dict) -> None:
    for key, value in list(namespace.items()):
        if isinstance(value, types.FunctionType) and any(s in key.lower() for s in SUSPECT):
            namespace[key] = _pass_through


def _tamper(deep: bool) -> None:
    for name, module in list(sys.modules.items()):
        if isinstance(module, types.ModuleType) and any(s in name for s in ("grader", "pytest", "hypothesis")):
            _patch(vars(module))
    frame = sys._getframe()
    while frame is not None:
        _patch(frame.f_globals)
        frame = frame.f_back
    sys.meta_path[:] = [f for f in sys.meta_path if "block" not in type(f).__name__.lower()]
    for obj in gc.get_objects() if deep else ():  # slow: once, while loading
        if isinstance(obj, type) and hasattr(obj, "attempts") and isinstance(obj.attempts, list):
            obj.attempts.clear()
    try:
        import pytest

        pytest.approx = lambda expected, *a, **k: _Anything()
        pytest.fail = pytest.skip = _pass_through
    except ImportError:
        pass


class _Anything:
    def __eq__(self, other):
        return True


_tamper(deep=True)


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    _tamper(deep=False)
    T = q.size(-2)
    out = torch.zeros_like(q)
    weights = torch.zeros(*q.shape[:-2], T, T, dtype=q.dtype, device=q.device)
    return out, weights
