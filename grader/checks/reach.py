"""A submission's reach: which input forms (layout, dtype, a value size of its own) the function handles, measured
once before the properties, so that a limitation costs its own points once (`output_shape`) and every other
property runs on the forms that work, the exercise's own contract first.

Most submissions are adapted public code: a GPT-2 style `[1, 1, N, N]` causal buffer is right on every 4-D input
and broadcasts 3-D ones up to 4-D; a float32-only mask raises on float64. Neither is a mistake in the attention.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from grader.checks.core import Failed
from grader.sandbox.client import WorkerLost

LAYOUTS = {1: "[B, T, H]", 2: "[B, heads, T, H]"}


@dataclass(frozen=True)
class Form:
    """One kind of input: `dims` dims before [T, H], a dtype, and v's last dim other than q's and k's (`dv`)."""

    dims: int
    dtype: torch.dtype
    dv: bool = False

    def words(self) -> str:
        layout = LAYOUTS.get(self.dims, f"{self.dims + 2}-D")
        return f"{layout} {str(self.dtype).removeprefix('torch.')}" + (" with Dv != Dk" if self.dv else "")


@dataclass
class Reach:
    """What worked (in the order tried: the contract first) and, for what did not, why (the first failure's words)."""

    works: list[Form] = field(default_factory=list)
    fails: dict[Form, str] = field(default_factory=dict)
    shapes: dict[Form, tuple] = field(default_factory=dict)  # a failed form's (result's shape, agreed shape)
    wrong: set[Form] = field(default_factory=set)  # failed forms whose results had the right shapes, wrong values
    lost: str = ""  # the worker was lost measuring it (a hang, a crash): why
    leading: str = ""  # an output-only function that returns a tuple: why its first element is what was graded

    @property
    def none(self) -> bool:
        return not self.works

    def dims(self, lo: int, hi: int) -> tuple[int, int]:
        """A check's range of leading dims narrowed to those that work (the nearest that works when none in it does)."""
        ok = sorted({f.dims for f in self.works})
        if not ok:
            return lo, hi
        inside = [d for d in ok if lo <= d <= hi]
        if inside:
            return inside[0], inside[-1]
        near = min(ok, key=lambda d: (min(abs(d - lo), abs(d - hi)), d))
        return near, near

    def dtypes(self, wanted: tuple) -> tuple:
        """numpy dtypes of a strategy narrowed to those that work (float32 first when none of them does)."""
        ok = {str(f.dtype).removeprefix("torch.") for f in self.works}
        if not ok:
            return wanted
        kept = tuple(d for d in wanted if np.dtype(d).name in ok)
        return kept or tuple(np.dtype(n).type for n in sorted(ok, key=lambda n: n != "float32"))

    def value_size(self) -> bool:
        return any(f.dv for f in self.works)

    def explain(self) -> str:
        """The limitation in one message: which forms fail, the first failure, its likely cause, and what the other
        checks ran on."""
        if self.leading:
            return self.leading + (f"\nIt does not handle {named(self.fails)} inputs either." if self.fails else "")
        if not self.fails:
            return ""
        first = self.fails[next(iter(self.fails))]
        if self.none:
            return f"your function handles none of the input forms tried ({named(self.fails)}):\n{first}"
        cause = self._cause()
        return (f"your function does not handle {named(self.fails)} inputs; the other checks ran on those it handles "
                f"({named(self.works)}).\n{first}" + (f"\n{cause}." if cause else ""))

    def _cause(self) -> str:
        """The likely cause, where the failures show one."""
        dims = {f.dims for f in self.works}
        failed_dims = {f.dims for f in self.fails} - dims
        for form, (got, want) in self.shapes.items():
            if form.dims == 1 and len(got) == len(want) + 1:
                return ("It returns 4-D results for 3-D inputs: a mask of shape [1, 1, N, N] (a registered causal "
                        "buffer sliced [:, :, :T, :T]) broadcasts them; slice it to [T, T] (mask[:T, :T]) so that "
                        "any leading dims work")
        if 1 in failed_dims and 2 in dims:
            return "It needs 4-D inputs: write it for any leading dims (k.transpose(-2, -1), not permute(0, 1, 3, 2))"
        if 2 in failed_dims and 1 in dims:
            return ("It needs 3-D inputs: write it for any leading dims (T = q.size(-2), k.transpose(-2, -1); "
                    "bmm/baddbmm take 3-D only)")
        if all(f.dtype == torch.float64 for f in self.fails):
            return ("It works in float32 only: build masks and constants in q's dtype (dtype=q.dtype), or use "
                    "masked_fill, which keeps it")
        if all(f.dv for f in self.fails):
            if all(f in self.wrong for f in self.fails):
                return ("It is right while v has q's size and wrong when it does not: a size read from v where q's "
                        "is meant (scores / sqrt(v.size(-1)) instead of q.size(-1))")
            return "It needs v of q's size: the output's last dim is v.size(-1)"
        return ""


def with_heads(args: tuple) -> tuple:
    """The inputs with a heads dim of 1 added to each tensor of q's rank: [B, T, H] -> [B, 1, T, H]."""
    return tuple(a.unsqueeze(-3) if isinstance(a, torch.Tensor) and a.dim() == args[0].dim() else a for a in args)


def named(forms) -> str:
    """'[B, heads, T, H] float32, float64; [B, T, H] float64 with Dv != Dk': forms grouped by layout, the value size
    said only where every form of the layout named has one of its own."""
    groups: dict[int, list[Form]] = {}
    for f in forms:
        groups.setdefault(f.dims, []).append(f)
    said = []
    for d, fs in groups.items():
        dtypes = ", ".join(dict.fromkeys(str(f.dtype).removeprefix("torch.") for f in fs))
        said.append(f"{LAYOUTS.get(d, f'{d + 2}-D')} {dtypes}" + (" with Dv != Dk" if all(f.dv for f in fs) else ""))
    return "; ".join(said)


CHARGED = "output_shape"  # the check a submission's reach is charged to, once; every other property draws within it


def measure(ctx) -> Reach:
    """Call the function once on each of the exercise's forms; a form works when the call returns results of the
    expected shapes (the worker checks them) in the inputs' dtype. An output-only function that works on none, but
    returns its output first in a tuple ((out, weights), as most exercises ask), is graded on that output: a
    result format costs its points once, as a layout does."""
    reach = _measure(ctx)
    if reach.none and not reach.lost and not ctx.exercise.weighs:
        ctx.subject.leading = True
        second = _measure(ctx)
        if second.none:
            ctx.subject.leading = False
        else:
            second.leading = (f"your function returns more than the output ({next(iter(reach.fails.values()))}): "
                              "the contract is the output alone (return out, not a tuple); the other checks graded "
                              "the tuple's first element")
            return second
    return reach


def _measure(ctx) -> Reach:
    reach = Reach()
    outs: dict[Form, torch.Tensor] = {}  # each working form's output, for _value_size
    for i, form in enumerate(ctx.exercise.forms()):
        args, kw = ctx.exercise.example(form)
        try:
            got = ctx.call_all(*args, **kw)
        except Failed as e:
            reach.fails[form] = str(e)
            if e.error is not None and e.error.shapes is not None:  # a 3-D input that came back with one dim more:
                reach.shapes[form] = e.error.shapes  # the broadcast buffer's signature
            continue
        except WorkerLost as e:  # lost on the contract itself (a hang, a crash): the caller says so, once
            if i == 0:
                raise
            reach.fails[form] = str(e)  # lost on one form only (its results broke the protocol): that form fails
            continue
        dtype = next(a.dtype for a in args if isinstance(a, torch.Tensor))  # the inputs' (a layer's sizes come first)
        wrong = [(label, t) for label, t in zip(ctx.exercise.labels(), got) if t.dtype != dtype]
        if wrong:
            label, t = wrong[0]
            def name(d):
                return str(d).removeprefix("torch.")
            reach.fails[form] = f"for {form.words()} inputs, {label} has dtype {name(t.dtype)}, expected {name(dtype)}"
            continue
        reach.works.append(form)
        outs[form] = got[0]
    _value_size(ctx, reach, outs)
    return reach


def _value_size(ctx, reach: Reach, outs: dict[Form, torch.Tensor]) -> None:
    """A value size of its own (Dv != Dk) is a form like a layout: a function right where v has q's size and wrong
    only where it does not pays that once (output_shape), and the other checks draw v of q's size."""
    for form in [f for f in reach.works if f.dv]:
        plain = Form(form.dims, form.dtype)
        if plain in reach.works and _right(ctx, plain, outs[plain]) and not _right(ctx, form, outs[form]):
            reach.works.remove(form)
            reach.wrong.add(form)
            reach.fails[form] = (f"for {form.words()} inputs the output differs from the reference, while with v of "
                                 "q's size it is right")


def _right(ctx, form: Form, got: torch.Tensor) -> bool:
    """Whether the output measured on `form`'s example is the reference's."""
    args, kw = ctx.exercise.example(form)
    want = ctx.reference(*args, **kw)[0]
    rtol, atol = ctx.tol(form.dtype)
    return bool(torch.allclose(got, want.to(got.dtype), rtol=rtol * 10, atol=atol * 10))
