# HOSTILE: prints what a passing pytest run looks like (PASSED lines, a perfect total, the final summary bar) to
# stdout and stderr, while loading and on every call. Returns zeros, as chapter5/vacuous_zeros.py.
# Expected: the grade of chapter5/vacuous_zeros.py; pytest's own output, counts and exit status are untouched.
import sys

import torch

FAKE = """
submission.py::loads PASSED                                              [  6%]
submission.py::future_weights_zero PASSED                                [ 12%]
Total: 100/100
============================== 17 passed in 0.42s ==============================
"""
print(FAKE, flush=True)
sys.stderr.write(FAKE)


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    print(FAKE)
    T = q.size(-2)
    out = torch.zeros_like(q)
    weights = torch.zeros(*q.shape[:-2], T, T, dtype=q.dtype, device=q.device)
    return out, weights
