"""What a check is and what it sees: `Check` (one property beside its hint), `Ctx` (the submission through a small
call interface, the exercise's inputs and tolerances) and `Failed` (a counterexample a student can act on).

A check raises `Failed`; it computes every expectation here, in the grader process, and sees the submission only
through `ctx.call` / `ctx.grads` / `ctx.devices`, whose arguments are those of the exercise's function.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field, replace
from typing import Callable

import warnings

import hypothesis
import numpy as np
import torch
from hypothesis import HealthCheck, Phase, given, reject
from hypothesis.errors import HypothesisDeprecationWarning, UnsatisfiedAssumption

from grader.checks.draws import Draws
from grader.checks.format import Mismatch, mismatch, shape_of, shown
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


class _OffPlan(Exception):
    """A planned example ended otherwise than on the reference (rejected here, or not): hypothesis takes over."""


class Failed(Exception):
    """The property does not hold; the message is the counterexample, written for the student."""

    case: "Case | None" = None  # the shrunk failing inputs, attached by Ctx.prove
    error: StudentError | None = None  # what the function raised or returned wrong, when that is the failure


@dataclass
class Case:
    """A failing example's inputs (those of its first call) and the weights the submission and the reference give
    on them: what the feedback draws and replay prints. The report ignores it."""

    args: tuple
    kw: dict
    names: tuple[str, ...] = ("q", "k", "v")  # the exercise's names of the positional inputs
    weights: torch.Tensor | None = None
    expected: torch.Tensor | None = None


@dataclass(frozen=True)
class Check:
    id: str
    title: str
    misconception: str
    hint: str
    run: Callable[["Ctx"], None]


def check(catalogue: dict, id: str, title: str, misconception: str, hint: str):
    """A decorator that puts the function into `catalogue` as the check `id` (shared.SHARED, or an exercise's own)."""

    def register(fn):
        catalogue[id] = Check(id, title, misconception, hint, fn)
        return fn

    return register


@dataclass
class Ctx:
    subject: Subject
    exercise: "object"  # an exercises.base.Exercise
    tolerances: dict  # dtype name -> (rtol, atol)
    max_examples: int
    device: str = "cpu"
    check: str = ""  # the id of the check this context runs: with `draws`, it seeds every property's examples
    draws: Draws = field(default_factory=Draws)
    notes: list[str] = field(default_factory=list)  # said in the report, cost nothing (float32 internals)
    reach: "object | None" = None  # a checks.reach.Reach: the input forms the function handles; None: all of them
    first: tuple | None = field(default=None, repr=False)  # (args, kw) of the current example's first call
    # The examples hypothesis drew for this check on the reference, per `prove` call, and whether each was rejected:
    # [(strategy, [(args, kwargs, rejected)...])].
    plan: list | None = field(default=None, repr=False)
    recording: list | None = field(default=None, repr=False)  # `prove` appends the same here while a plan is built
    _proved: int = field(default=0, repr=False)
    _memo: list | None = field(default=None, repr=False)  # [(call, answer)] of a replay, then served to hypothesis
    _serving: bool = field(default=False, repr=False)
    phases = (Phase.explicit, Phase.generate, Phase.shrink)  # a class attribute, not a field

    # -- running properties ----------------------------------------------------------------------------------
    def prove(self, strategy, prop, max_examples: int | None = None) -> None:
        """Run `prop` on examples from `strategy`; the same submission always sees the same examples, seeded by the
        check's id, the number of this call within the check and the draws' salt (checks.draws).

        Those are the examples recorded in the plan, when there is one: a property that holds meets exactly them.
        Only when one fails does hypothesis run, to shrink it; the calls the replay made are then answered again
        from memory, so the worker sees each call once, in the same order."""
        n = max_examples or self.max_examples
        strategy_key = f"{n} {strategy!r}"
        planned = self.plan[self._proved] if self.plan and self._proved < len(self.plan) else None
        seed = self.draws.seed(self.check, self._proved)
        self._proved += 1
        if planned is not None and planned[0] == strategy_key and self._holds_on(prop, planned[1]):
            return
        drawn: list | None = [] if self.recording is not None else None

        @functools.wraps(prop)  # prop's signature, which `given` reads
        def example(*args, **kwargs):
            self.first = None
            inputs = _cloned((args, kwargs)) if drawn is not None else None
            rejected = _rejects(prop, args, kwargs)
            if drawn is not None:
                drawn.append((*inputs, rejected))
            if rejected:
                reject()

        test = hypothesis.seed(seed)(given(strategy)(example))
        test = hypothesis.settings(
            max_examples=n,
            database=None,
            deadline=None,
            phases=self.phases,
            suppress_health_check=list(HealthCheck),
            report_multiple_bugs=False,
            print_blob=False,
            verbosity=hypothesis.Verbosity.quiet,
        )(test)
        try:
            test()
        except Failed as e:  # hypothesis ran the shrunk example last, so `first` holds its inputs
            self._memo = None
            e.case = self.witness()
            raise
        finally:
            self._memo = None
        if drawn is not None:
            self.recording.append((strategy_key, drawn))

    def _holds_on(self, prop, examples: list) -> bool:
        """Whether `prop` holds on every planned example, and rejects (`assume`) exactly those the reference's did:
        hypothesis, seeded, draws its next example from what it drew and how each one ended, so such a
        replay is the run hypothesis would make. If not, hypothesis takes over with the calls made so far answered
        from memory, and what the replay noted is dropped (hypothesis notes it again)."""
        notes = len(self.notes)
        self._memo, self._serving = [], False
        try:
            with warnings.catch_warnings():  # `assume` outside a hypothesis run works, and warns that it does
                warnings.simplefilter("ignore", HypothesisDeprecationWarning)
                for args, kwargs, rejected in examples:
                    self.first = None
                    if _rejects(prop, _cloned(args), _cloned(kwargs)) != rejected:
                        raise _OffPlan
        except Exception:  # noqa: BLE001 - Failed, off the plan or not: hypothesis meets it again and says so as before
            del self.notes[notes:]
            self._serving = True
            return False
        except BaseException:
            self._memo = None
            raise
        self._memo = None
        return True

    def witness(self) -> Case | None:
        """The failing example's first call again, on the submission and on the reference."""
        if self.first is None:
            return None
        args, kw = self.first
        case = Case(args, kw, self.exercise.inputs)
        try:
            case.weights = self.call(*args, **kw)[1]
            case.expected = self.ref(*args, **kw)[1]
        except (Exception, WorkerLost):  # noqa: BLE001 - a picture is a bonus; the verdict stands without it
            pass
        return case

    # -- talking to the submission ---------------------------------------------------------------------------
    def call(self, *args, **kw):
        """(out, weights) of the submission: the first two parts of its result."""
        return self.call_all(*args, **kw)[:2]

    def call_all(self, *args, **kw) -> list[torch.Tensor]:
        """Every tensor of the submission's result, in the exercise's order (a KV cache's too)."""
        return self._ask(self.subject.call, args, kw)

    def call_inputs(self, *args, **kw):
        """The result's tensors, then every input tensor as the function left them."""
        return self._ask(self.subject.call, args, dict(kw, return_inputs=True))

    def grads(self, *args, grad_out, **kw):
        return self._ask(self.subject.grads, args, kw, "during backward", grad_out=grad_out)

    def _ask(self, fn, args, kw, when: str = "", **extra):
        """Ask the worker; its failures become messages that name the inputs they happened on."""
        kw = {**self.exercise.fixed_options(*args), **kw}
        if self.first is None:
            self.first = (args, shown(kw))
        try:
            return self._remembered(fn, args, kw, extra)
        except StudentError as e:
            failed = Failed(_raised(e, args, shown(kw), when))
            failed.error = e
            raise failed from None
        except WorkerLost as e:
            raise WorkerLost(f"{e} ({shape_of(*_qkv(args), **shown(kw))})") from None

    def _remembered(self, fn, args, kw, extra):
        """fn's answer; while a plan's replay runs, also kept, and given again when hypothesis repeats the call."""
        if self._memo is None:
            return fn(*args, expect=self.exercise.expect(*args, **shown(kw)), **extra, **kw)
        call = (fn.__name__, args, kw, extra)
        if self._serving:
            if self._memo and _fingerprint(self._memo[0][0]) == _fingerprint(call):
                answer = self._memo.pop(0)[1]
                if isinstance(answer, StudentError):
                    raise answer
                return _cloned(answer)
            self._memo = None  # hypothesis went elsewhere: from here on the worker answers
            return self._remembered(fn, args, kw, extra)
        call = _cloned(call)  # compared only if hypothesis takes over, by when the check may have changed its inputs
        try:
            answer = fn(*args, expect=self.exercise.expect(*args, **shown(kw)), **extra, **kw)
        except StudentError as e:
            self._memo.append((call, e))
            raise
        self._memo.append((call, _cloned(answer)))
        return answer

    def focus(self) -> None:
        """Make the next call, not the example's first, the one a failure shows (a step of a decoding loop)."""
        self.first = None

    def ref(self, *args, **kw):
        """(out, weights) of the reference: the first two parts of its result."""
        return tuple(self.reference(*args, **kw))[:2]

    def ref_all(self, *args, **kw) -> list[torch.Tensor]:
        """Every tensor of the reference's result, in the order of `call_all` (a KV cache's too)."""
        parts = self.reference(*args, **kw)
        return [t for p, x in zip(self.exercise.results, parts) for t in (x if len(p["labels"]) > 1 else (x,))]

    def reference(self, *args, **kw) -> tuple:
        """The reference's result on these inputs, every part as it returns them. The one place a check reaches
        the reference: a student build (checks.known_answers) answers here from the teacher's recorded answers."""
        return tuple(self.exercise.reference()(*args, **{**self.exercise.fixed_options(*args), **kw}))

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
                if torch.equal(got.to(half).to(got.dtype), got) and ((got != 0) & (got != 1)).any():
                    kind = str(half).removeprefix("torch.")
                    return replace(bad, note=f"every value of {name} is a {kind} value: computed in half precision "
                                             "(.half(), .bfloat16(), autocast), it loses float32's accuracy")
        return bad

    def tol(self, dtype: torch.dtype) -> tuple[float, float]:
        """(rtol, atol) for values of this dtype; half precisions fall back to float32's unless the rubric sets them."""
        name = str(dtype).removeprefix("torch.")
        return self.tolerances.get(name) or self.tolerances["float32"]


def _rejects(prop, args: tuple, kwargs: dict) -> bool:
    """Whether `prop` rejects these inputs (`assume`); anything else it raises goes on."""
    try:
        prop(*args, **kwargs)
    except UnsatisfiedAssumption:
        return True
    return False


def _cloned(x):
    """A copy that no property or caller can change in place: a plan's examples and remembered answers are reused."""
    if isinstance(x, torch.Tensor):
        return x.detach().clone()
    if isinstance(x, (tuple, list)):
        return type(x)(_cloned(y) for y in x)
    if isinstance(x, dict):
        return {k: _cloned(y) for k, y in x.items()}
    return x


def _fingerprint(x):
    """A call's arguments as comparable values (tensors by dtype, shape and bytes)."""
    if isinstance(x, torch.Tensor):
        t = x.detach().cpu().contiguous()
        return ("tensor", str(t.dtype), tuple(t.shape), t.reshape(-1).view(torch.uint8).numpy().tobytes())
    if isinstance(x, (tuple, list)):
        return tuple(_fingerprint(y) for y in x)
    if isinstance(x, dict):
        return tuple(sorted((k, _fingerprint(y)) for k, y in x.items()))
    return repr(x)


def _qkv(args: tuple) -> list[torch.Tensor]:
    """The q, k, v among a call's positional arguments, for shape_of."""
    return [a for a in args[:3] if isinstance(a, torch.Tensor)]


def _raised(e: StudentError, args: tuple, kw, when: str = "") -> str:
    where = f"\n    at {e.where.splitlines()[-1]}" if e.where else ""
    if e.kind is Kind.BAD_OUTPUT:
        return f"for {shape_of(*_qkv(args), **kw)}: {e}"
    return f"your function raised {e}{f' {when}' if when else ''} for {shape_of(*_qkv(args), **kw)}" + where
