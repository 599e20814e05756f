# HOSTILE: returns tensor subclasses whose __torch_function__ lies: comparisons and closeness tests report
# success, isnan/isinf report nothing, and shape/dtype/tolist/numpy are overridden; the data underneath is
# attention WITHOUT the causal mask (chapter5/bug_no_mask.py). The worker strips the subclass and sends raw bytes.
# Expected: exactly the grade of chapter5/bug_no_mask.py.
import math

import torch

_TRUE = {"allclose", "equal", "isclose", "eq", "__eq__", "isfinite", "ge", "le"}
_FALSE = {"isnan", "isinf", "ne", "__ne__", "any", "gt", "lt"}


class Liar(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in ("allclose", "equal"):
            return True
        result = super().__torch_function__(func, types, args, kwargs or {})
        if isinstance(result, torch.Tensor) and name in _TRUE | _FALSE:
            return torch.full_like(result, name in _TRUE, dtype=torch.bool)
        return result

    def tolist(self):
        return 0.0

    def numpy(self, *args, **kwargs):
        import numpy

        return numpy.zeros(1)

    def __reduce_ex__(self, protocol):  # a grader that unpickled results would run this
        import os

        return (os.system, ("echo pwned > /tmp/attention-grader-hostile-pwned",))


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    H = q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(H)
    weights = torch.softmax(scores, dim=-1)
    out = weights @ v
    return out.as_subclass(Liar), weights.as_subclass(Liar)
