# HOSTILE: makes every comparison in torch, numpy and math say "equal" (torch.allclose, torch.equal, torch.isclose,
# torch.testing.assert_close, Tensor.__eq__/__ne__, isnan, isfinite, ...), then returns attention WITHOUT the causal
# mask, exactly as chapter5/bug_no_mask.py does. Comparisons happen in the grader's process on tensors that
# arrived as bytes, so the patches change nothing.
# Expected: exactly the grade of chapter5/bug_no_mask.py.
import math

import numpy
import torch
import torch.testing


def _yes(*args, **kwargs):
    return True


def _nothing(*args, **kwargs):
    return None


def _all_true(a, *args, **kwargs):
    return torch.ones(torch.as_tensor(a).shape, dtype=torch.bool)


torch.allclose = torch.equal = _yes
torch.isclose = torch.eq = _all_true
torch.isfinite = _all_true
torch.isnan = torch.isinf = lambda a, *args, **kw: ~_all_true(a)
torch.testing.assert_close = torch.testing.assert_allclose = _nothing
torch.Tensor.__eq__ = _all_true
torch.Tensor.__ne__ = lambda self, other: ~_all_true(self)
torch.Tensor.allclose = torch.Tensor.equal = _yes
numpy.allclose = numpy.array_equal = _yes
numpy.testing.assert_allclose = numpy.testing.assert_array_equal = _nothing
math.isclose = _yes


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    H = q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(H)
    weights = torch.softmax(scores, dim=-1)
    out = weights @ v
    return out, weights
