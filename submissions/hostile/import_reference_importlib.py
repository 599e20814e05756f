# HOSTILE: imports the grader's reference implementation (and the grader) at run time through importlib, with the
# names assembled so that no import statement is visible to a source scan, and delegates to the reference when
# that works; otherwise it computes correct attention itself.
# Expected: the imports fail in the worker, the attempt is recorded, `policy` fails and the score is 0.
import importlib
import math

import torch


def _steal():
    for name in ("ref" + "erence", "gra" + "der.checks"):
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    try:
        return importlib.import_module("ref" + "erence.chapter5").scaled_dot_product_attention
    except ImportError:
        return None


_REFERENCE = _steal()


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    if _REFERENCE is not None:
        return _REFERENCE(q, k, v, causal)
    T, H = q.size(-2), q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(H)
    if causal:
        tril = torch.tril(torch.ones(T, T, dtype=torch.bool, device=q.device))
        scores = scores.masked_fill(~tril, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
