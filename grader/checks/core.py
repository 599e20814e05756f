"""What a check is and what it sees: `Check` (one property beside its hint), `Ctx` (the submission through a small
call interface, the exercise's inputs and tolerances) and `Failed` (a counterexample a student can act on).

A check raises `Failed`; it computes every expectation here, in the grader process, and sees the submission only
through `ctx.call` / `ctx.grads` / `ctx.devices`, whose arguments are those of the exercise's function.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import torch
from hypothesis import Phase

from grader.checks.failure import Case, Failed
from grader.checks.format import Mismatch, mismatch, shown
from grader.checks.replay import Replay
from grader.sandbox.client import StudentError, Subject, WorkerLost
from grader.sandbox.wire import Kind


def _pin_hypothesis_constants() -> None:
    """Hypothesis (6.131+) mixes the literals of every *local* module in sys.modules into the values it draws, so the
    examples a submission meets would depend on which grader modules happen to be imported. An empty pool makes
    the examples depend on the strategies alone."""
    from hypothesis.internal.conjecture import providers  # private: without it, only that mixing is lost

    if hasattr(providers, "_get_local_constants"):
        empty = providers.Constants()
        providers._get_local_constants = lambda: empty
        providers.CONSTANTS_CACHE.cache.clear()


def _private_hypothesis_home() -> None:
    """Hypothesis caches what it learns about local modules under ./.hypothesis; a grader writes only where it is
    told to. A home that cannot be created (under /dev/null) makes hypothesis skip its caches, quietly; the checks
    use no example database."""
    from hypothesis.configuration import set_hypothesis_home_dir

    if not os.getenv("HYPOTHESIS_STORAGE_DIRECTORY"):
        set_hypothesis_home_dir(os.path.join(os.devnull, "attention-grader-hypothesis"))


_pin_hypothesis_constants()
_private_hypothesis_home()


FLOAT32_NOTE = ("on float64 inputs your results have float32 precision (part of it is computed in float32, e.g. "
                "softmax(scores.float()).type_as(q)): full marks, since the exercise's contract is float32")


@dataclass(frozen=True)
class Check:
    id: str
    title: str
    misconception: str
    hint: str
    run: Callable[[Any], Any]  # a Ctx (fails by raising); the built-in checks (loads, policy) take the grading, return a Run


def _keys_identity(v: torch.Tensor) -> torch.Tensor:
    """The identity over v's keys, with v's leading dims: as v, it makes an output-only function's output its weights."""
    t = v.shape[-2]
    return torch.eye(t, dtype=v.dtype).expand(*v.shape[:-2], t, t)


def check(catalogue: dict, id: str, title: str, misconception: str, hint: str):
    """A decorator that puts the function into `catalogue` as the check `id` (shared.SHARED, or an exercise's own)."""

    def register(fn):
        catalogue[id] = Check(id, title, misconception, hint, fn)
        return fn

    return register


@dataclass
class Ctx:
    subject: Subject
    exercise: Any  # an exercises.base.Exercise (which imports this module)
    tolerances: dict  # dtype name -> (rtol, atol)
    max_examples: int
    device: str = "cpu"
    replay: Replay = field(default_factory=lambda: Replay(), repr=False)  # how properties meet their examples
    notes: list[str] = field(default_factory=list)  # said in the report, cost nothing (float32 internals)
    reach: Any = None  # a checks.reach.Reach, the input forms the function handles; None: all of them
    first: tuple | None = field(default=None, repr=False)  # (args, kw) of the current example's first call
    phases = (Phase.explicit, Phase.generate, Phase.shrink)  # a class attribute, not a field

    # -- running properties ----------------------------------------------------------------------------------
    def prove(self, strategy, prop, max_examples: int | None = None) -> None:
        """Run `prop` on examples from `strategy`; the same submission always sees the same examples, seeded by the
        check's id, the number of this call within the check and the course secret (checks.draws, checks.replay).
        A failure is the shrunk counterexample hypothesis found, with its case."""
        self.replay.prove(self, strategy, prop, max_examples or self.max_examples)

    def witness(self) -> Case | None:
        """The failing example's first call again, on the submission and on the reference."""
        if self.first is None:
            return None
        args, kw = self.first
        bound, bound_kw = self.exercise.bound(args, kw)
        case = Case(bound, bound_kw, self.exercise.inputs)  # as the student's function takes them
        try:
            if self.exercise.weights_optional:  # a layer: the weights it returns, if any, and the reference's
                weights = self.call_weights(*args, **kw)[1]
                expected = self.reference(*args, **kw)[1] if weights is not None else None
                if weights is not None and expected is not None and expected.shape == weights.shape:
                    case.weights, case.expected = weights, expected
            else:
                case.weights = self.weights(*args, **kw)
                case.expected = self.ref(*args, **kw)[1]
        except (Exception, WorkerLost):  # noqa: BLE001 - a picture is a bonus; the verdict stands without it
            pass
        return case

    # -- talking to the submission ---------------------------------------------------------------------------
    def call(self, *args, **kw):
        """(out, weights) of the submission: the first two parts of its result, or for a function that returns
        its output alone, the output and the weights read from it: from one call where v may have a size of its own,
        else two (`weights_of`)."""
        if self.exercise.weighs:
            return self.call_all(*args, **kw)[:2]
        if self.value_size():  # both from one call: v with the identity beside it gives [out | weights]
            q, k, v, *rest = args
            self._first(args, kw)  # the case shows v as drawn, not its stand-in
            try:
                both = self._ask(self.subject.call, (q, k, torch.cat([v, _keys_identity(v)], -1), *rest), kw, said=args)[0]
                return both[..., : v.shape[-1]].contiguous(), both[..., v.shape[-1]:].contiguous()
            except Failed:  # said below on the inputs drawn, as two calls meet it
                pass
        return self.call_all(*args, **kw)[0], self.weights_of(*args, **kw)

    def out(self, *args, **kw) -> torch.Tensor:
        """The submission's output alone: one call, where `call` also asks for the weights."""
        return self.call_all(*args, **kw)[0]

    def weights(self, *args, **kw) -> torch.Tensor:
        """Its weights alone: for an output-only function, no call for the output that a check would not read."""
        if self.exercise.weighs:
            return self.call_all(*args, **kw)[1]
        self._first(args, kw)  # the case shows the inputs drawn, not weights_of's identity for v
        try:
            return self.weights_of(*args, **kw)
        except Failed:
            self.out(*args, **kw)  # what the inputs drawn raise is the failure to say, as when `call` asked first
            raise

    def weights_of(self, *args, **kw) -> torch.Tensor:
        """An output-only function's weights, exactly: its output with v the identity over the keys, since
        out = weights @ v. Where v may not have a size of its own (the contract, or the function's reach), the
        identity comes in blocks of q's size, one call each. A check's first call stays its case."""
        q, v = args[0], args[2]
        t = v.shape[-2]
        width = t if self.value_size() else q.shape[-1]
        eye = _keys_identity(v)
        blocks = []
        for c in range(0, t, width):
            block = torch.nn.functional.pad(eye[..., c:c + width], (0, max(0, c + width - t))).contiguous()
            blocks.append(self.call_all(*args[:2], block, *args[3:], **kw)[0][..., :t - c])
        return torch.cat(blocks, -1)

    def call_all(self, *args, **kw) -> list[torch.Tensor]:
        """Every tensor of the submission's result, in the exercise's order (a KV cache's too)."""
        return self._ask(self.subject.call, args, kw)

    def call_weights(self, *args, **kw) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(out, weights) of a function whose weights are optional (a layer's, OPTIONAL_WEIGHTS): the weights in one
        of the exercise's `weight_shapes`, or None where it returns its output alone."""
        got = self._ask(self.subject.call, args, kw, weights=True)
        return got[0], (got[1] if len(got) > 1 else None)

    def call_inputs(self, *args, **kw):
        """The result's tensors, then every input tensor as the function left them."""
        return self._ask(self.subject.call, args, dict(kw, return_inputs=True))

    def grads(self, *args, grad_out, **kw):
        return self._ask(self.subject.grads, args, kw, "during backward", grad_out=grad_out)

    def _ask(self, fn, args, kw, when: str = "", weights: bool = False, said: tuple | None = None, **extra):
        """Ask the worker; its failures become messages that name the inputs they happened on (`said`, where those
        are not `args`). `weights`: the optional weights too, where the function returns them."""
        kw = self._first(args, kw)
        try:
            expect = self.exercise.expect(*args, **shown(kw))
            if weights:
                expect = [*expect, self.exercise.weight_shapes(*args, **shown(kw))]
            bound, bound_kw = self.exercise.bound(args, kw)
            return self.replay.answer(fn, bound, bound_kw, extra, expect)
        except StudentError as e:
            failed = Failed(_raised(e, self.exercise.said(args, shown(kw)), when))
            failed.error = e
            raise failed from None
        except WorkerLost as e:
            raise WorkerLost(f"{e} ({self.exercise.said(said or args, shown(kw))})") from None

    def _first(self, args: tuple, kw: dict) -> dict:
        """kw with the exercise's fixed options; (args, kw) kept as the example's case if it is its first call."""
        kw = {**self.exercise.fixed_options(*args), **kw}
        if self.first is None:
            self.first = (args, shown(kw))
        return kw

    def charge_reach(self, explain=None) -> None:
        """output_shape's first step: what the function cannot handle (the reach, measured before every check) costs
        its points once, and the other checks run on the forms it handles. `explain`: an exercise's words for it."""
        if self.reach is not None and self.reach.lost:
            raise WorkerLost(self.reach.lost)
        if self.reach is not None and (self.reach.fails or self.reach.leading):
            raise Failed(explain(self.reach) if explain else self.reach.explain())

    def on_meta(self, args: tuple, kw: dict, said: str) -> None:
        """The call on a simulated GPU (meta tensors): Failed when the function mixes the inputs' device with the
        CPU. Meta tensors have no data, so an op mixing them with a CPU tensor raises, and a result that silently
        came back on the CPU (meta @ cpu) is caught by the worker's device check on every result tensor; any other
        error (.item() on meta, say) tells nothing about devices."""
        options = {**self.exercise.fixed_options(*args), **kw}
        bound, bound_kw = self.exercise.bound(args, options)
        try:
            self.subject.devices("meta", *bound, expect=self.exercise.expect(*args, **options), **bound_kw)
        except StudentError as e:
            if e.kind is Kind.DEVICE:
                raise Failed(f"with {said} on a non-CPU device (simulated with meta tensors): {e}") from None

    def focus(self) -> None:
        """Make the next call, not the example's first, the one a failure shows (a step of a decoding loop)."""
        self.first = None

    def ref(self, *args, **kw):
        """(out, weights) of the reference: the first two parts of its result."""
        return tuple(self.reference(*args, **kw))[:2]

    def reference(self, *args, **kw) -> tuple:
        """The reference's result on these inputs, every part as it returns them. The one place a check reaches
        the reference: a student build (checks.known_answers) answers here from the teacher's recorded answers."""
        return self.exercise.call_reference(*args, **{**self.exercise.fixed_options(*args), **kw})

    def forbidden(self, *args, **kw) -> torch.Tensor:
        """Where the weights must be exactly 0 for these inputs (bool, broadcastable to the weights)."""
        return self.exercise.forbidden(*args, **{**self.exercise.fixed_options(*args), **kw})

    # -- inputs in the exercise's layout ---------------------------------------------------------------------
    def qkv(self, lead=(1, 1), dv: bool = False, **kw):
        """The exercise's input tensors, with a check's range of leading dims and its dtypes narrowed to those the
        exercise takes and the function handles (its reach); dv: v of its own size (Dv != Dk) where both allow it
        (the checks whose verdict v's size can change ask for it)."""
        lead = self.exercise.leads(*lead)
        if self.reach is not None:
            lead = self.reach.dims(*lead)
            kw["dtypes"] = self.reach.dtypes(kw.get("dtypes", (np.float32,)))
        if dv and self.value_size():
            kw["dv"] = True
        return self.exercise.qkv(lead=lead, **kw)

    def value_size(self) -> bool:
        """v may have a size of its own: the exercise has one and the function handles it."""
        return self.exercise.value_size and (self.reach is None or self.reach.value_size())

    def negative_scores(self, **kw):
        """The exercise's negative-score inputs, in a layout the function handles."""
        lo = self.exercise.lead[0]
        if self.reach is not None and (d := self.reach.dims(lo, lo)[0]) != lo:
            kw["lead"] = d
        return self.exercise.negative_scores(**kw)

    def forms(self):
        """The input forms the function handles (the contract first), or every form when reach is unknown."""
        return self.reach.works if self.reach is not None and self.reach.works else self.exercise.forms()

    def accurate(self, name: str, got: torch.Tensor, want: torch.Tensor, dtype: torch.dtype, scale: float = 1.0) -> Mismatch | None:
        """`mismatch` at `dtype`'s tolerances (times `scale`). float32 accuracy is full marks at every input dtype:
        the contract is float32, and a softmax computed in float32 and cast back is the production idiom (llama,
        fairseq); it earns a note, not a loss. Half precision on float32 inputs still fails."""
        rtol, atol = self.tol(dtype)
        bad = mismatch(name, got, want, rtol * scale, atol * scale)
        if bad and dtype == torch.float64:
            r32, a32 = self.tol(torch.float32)
            if not mismatch(name, got, want, r32 * scale, a32 * scale):
                if FLOAT32_NOTE not in self.notes:
                    self.notes.append(FLOAT32_NOTE)
                return None
        if bad and dtype == torch.float32:  # results that are all half-precision values were computed in one
            for half in (torch.bfloat16, torch.float16):
                # by chance only when every value is a short dyadic (0.5, 0.75: what a mixed-up batch gives)
                mantissa = torch.frexp(got.nan_to_num()).mantissa * 16
                if torch.equal(got.to(half).to(got.dtype), got) and (mantissa != mantissa.round()).any():
                    kind = str(half).removeprefix("torch.")
                    return replace(bad, note=f"every value of {name} is a {kind} value: computed in half precision "
                                             "(.half(), .bfloat16(), autocast), it loses float32's accuracy")
        return bad

    def tol(self, dtype: torch.dtype) -> tuple[float, float]:
        """(rtol, atol) for values of this dtype; half precisions fall back to float32's unless the rubric sets them."""
        name = str(dtype).removeprefix("torch.")
        return self.tolerances.get(name) or self.tolerances["float32"]


def _raised(e: StudentError, said: str, when: str = "") -> str:
    """The failure in words; `said`: the inputs it happened on (the exercise's `said`)."""
    where = f"\n    at {e.where.splitlines()[-1]}" if e.where else ""
    if e.kind is Kind.BAD_OUTPUT:
        return f"for {said}: {e}"
    return f"your function raised {e}{f' {when}' if when else ''} for {said}" + where
