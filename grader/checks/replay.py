"""How a check's properties meet their examples: the example plan replayed without hypothesis, hypothesis where it
fails, and the calls the replay made answered again from memory, so the worker sees each call once, in order.

A check author never reads this: `Ctx.prove` and `Ctx.call` delegate here. The plan (grading.plan) holds, per
`prove` call of a check, the examples hypothesis drew on the reference and whether each was rejected (`assume`);
hypothesis is seeded (checks.draws), so a property that holds meets exactly them.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass, field

import hypothesis
import torch
from hypothesis import HealthCheck, given, reject
from hypothesis.errors import HypothesisDeprecationWarning, UnsatisfiedAssumption

from grader.checks.draws import Draws
from grader.checks.failure import Failed
from grader.sandbox.client import StudentError


class _OffPlan(Exception):
    """A planned example ended otherwise than on the reference (rejected here, or not): hypothesis takes over."""


@dataclass
class Replay:
    check: str = ""  # the check's id: with `draws`, it seeds every property's examples
    draws: Draws = field(default_factory=Draws)
    plan: list | None = None  # [(strategy, [(args, kwargs, rejected)...])] per prove call, drawn on the reference
    recording: list | None = None  # `prove` appends the same here while a plan is built
    proved: int = 0
    memo: list | None = None  # [(call, answer)] of a replay, then served to hypothesis
    serving: bool = False
    known: dict | None = None  # {(check, prove call, strategy): examples} hypothesis drew in gradings before this one
    # that draw alike (a student build's recording grades the reference in many forms): replayed as a plan is

    def prove(self, ctx, strategy, prop, n: int) -> None:
        """Run `prop` on examples from `strategy`: the plan's, when it has them, else hypothesis'; a failure carries
        its shrunk case (ctx.witness)."""
        strategy_key = f"{n} {strategy!r}"
        planned = self.plan[self.proved] if self.plan and self.proved < len(self.plan) else None
        seed = self.draws.seed(self.check, self.proved)
        drawn_as = (self.check, self.proved, strategy_key)  # what its examples are kept under in `known`
        self.proved += 1
        examples = planned[1] if planned is not None and planned[0] == strategy_key else None
        if examples is None and self.known is not None:  # a recording's plan is also known: replayed once, not twice
            examples = self.known.get(drawn_as)
        if examples is not None and self._holds_on(ctx, prop, examples):
            if self.recording is not None:  # known from an earlier grading: the run hypothesis would make, kept
                self.recording.append((strategy_key, examples))
            return
        drawn: list | None = [] if self.recording is not None or self.known is not None else None

        @functools.wraps(prop)  # prop's signature, which `given` reads
        def example(*args, **kwargs):
            ctx.first = None
            inputs = cloned((args, kwargs)) if drawn is not None else None
            rejected = _rejects(prop, args, kwargs)
            if drawn is not None:
                drawn.append((*inputs, rejected))
            if rejected:
                reject()

        test = hypothesis.seed(seed)(given(strategy)(example))
        test = hypothesis.settings(
            max_examples=n, database=None, deadline=None, phases=ctx.phases, suppress_health_check=list(HealthCheck),
            report_multiple_bugs=False, print_blob=False, verbosity=hypothesis.Verbosity.quiet,
        )(test)
        try:
            test()
        except Failed as e:  # hypothesis ran the shrunk example last, so `first` holds its inputs
            self.memo = None
            e.case = ctx.witness()
            raise
        finally:
            self.memo = None
        if drawn is not None and self.recording is not None:
            self.recording.append((strategy_key, drawn))
        if drawn is not None and self.known is not None:
            self.known[drawn_as] = drawn

    def _holds_on(self, ctx, prop, examples: list) -> bool:
        """Whether `prop` holds on every planned example, and rejects exactly those the reference's did: hypothesis,
        seeded, draws its next example from what it drew and how each one ended, so such a replay is the run
        hypothesis would make. If not, hypothesis takes over with the calls made so far answered from memory, and
        what the replay noted is dropped (hypothesis notes it again)."""
        notes = len(ctx.notes)
        self.memo, self.serving = [], False
        try:
            with warnings.catch_warnings():  # `assume` outside a hypothesis run works, and warns that it does
                warnings.simplefilter("ignore", HypothesisDeprecationWarning)
                for args, kwargs, rejected in examples:
                    ctx.first = None
                    if _rejects(prop, cloned(args), cloned(kwargs)) != rejected:
                        raise _OffPlan
        except Exception:  # noqa: BLE001 - Failed, off the plan or not: hypothesis meets it again and says so as before
            del ctx.notes[notes:]
            self.serving = True
            return False
        except BaseException:
            self.memo = None
            raise
        self.memo = None
        return True

    def answer(self, fn, args, kw, extra, expect):
        """fn's answer; while a plan's replay runs, also kept, and given again when hypothesis repeats the call."""
        if self.memo is None:
            return fn(*args, expect=expect, **extra, **kw)
        call = (fn.__name__, args, kw, extra)
        if self.serving:
            if self.memo and _fingerprint(self.memo[0][0]) == _fingerprint(call):
                answer = self.memo.pop(0)[1]
                if isinstance(answer, StudentError):
                    raise answer
                return cloned(answer)
            self.memo = None  # hypothesis went elsewhere: from here on the worker answers
            return self.answer(fn, args, kw, extra, expect)
        call = cloned(call)  # compared only if hypothesis takes over, by when the check may have changed its inputs
        try:
            answer = fn(*args, expect=expect, **extra, **kw)
        except StudentError as e:
            self.memo.append((call, e))
            raise
        self.memo.append((call, cloned(answer)))
        return answer


def _rejects(prop, args: tuple, kwargs: dict) -> bool:
    """Whether `prop` rejects these inputs (`assume`); anything else it raises goes on."""
    try:
        prop(*args, **kwargs)
    except UnsatisfiedAssumption:
        return True
    return False


def cloned(x):
    """A copy that no property or caller can change in place: a plan's examples and remembered answers are reused."""
    if isinstance(x, torch.Tensor):
        return x.detach().clone()
    if isinstance(x, (tuple, list)):
        return type(x)(cloned(y) for y in x)
    if isinstance(x, dict):
        return {k: cloned(y) for k, y in x.items()}
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
