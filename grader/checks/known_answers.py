"""Known answers: what a student build has in place of the reference.

The teacher's build runs the rubric's checks on the reference with a `Recording` context, which keeps the
reference's result for every input a check asked about (and, for the gradients check, the gradients it gave for
the drawn output gradient). Grading is derandomized: hypothesis draws the same examples in the same order every
run, so a student's function meets a prefix of what the reference met, until its first failure. A student build
answers those from the book (`Replaying`). What only shrinking draws (a smaller failing case) has no answer: that
draw is rejected, so the shrunk counterexample stays one the book knows. A check that passed but met a draw
without an answer cannot give a verdict here: it is "graded after submission", like a hidden check.

The book also carries the example plan the answers were recorded on (grading.plan), so a student build replays
it as the teacher's grader does, and runs hypothesis only where a check fails. It is a `known_answers.pt` file
beside this module, present only in a student build, loaded with `torch.load(weights_only=True)` (tensors,
tuples and strings: nothing is unpickled as code).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from pathlib import Path
from typing import NoReturn

import hypothesis.errors
import torch
from hypothesis import Phase, reject

from grader.checks import reach
from grader.checks.core import Ctx
from grader.checks.draws import Draws

FILE = Path(__file__).with_name("known_answers.pt")
LATER = "graded after submission"


class GradedLater(Exception):
    """This build cannot give this check's verdict; the teacher's grader will."""


def graded_later(ctx: Ctx) -> None:
    """What a hidden check is in a student build: its code and data are not there."""
    raise GradedLater(f"{LATER} (hidden check)")


def key(args: tuple, kw: dict) -> str:
    """A digest of a call's inputs: dtypes, shapes and the exact bytes of every tensor, and the options."""
    h = hashlib.sha256()

    def feed(x) -> None:
        if isinstance(x, torch.Tensor):
            t = x.detach().cpu().contiguous()
            h.update(f"T{t.dtype}{tuple(t.shape)}".encode())
            h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
        elif isinstance(x, (tuple, list)):
            h.update(f"({len(x)}".encode())
            for y in x:
                feed(y)
        else:
            h.update(repr(x).encode())

    feed(tuple(args))
    feed(sorted(kw.items()))
    return h.hexdigest()


def _frozen(parts):
    """The result's tensors detached and copied, nested tuples kept (a KV cache)."""
    if isinstance(parts, torch.Tensor):
        return parts.detach().clone()
    if isinstance(parts, (tuple, list)):
        return tuple(_frozen(p) for p in parts)
    return parts


def _plans_once(data: dict, seen: dict) -> dict:
    """A saved book whose plans hold each input once: checks and reaches draw many of the same tensors, and
    torch.save writes a tensor object once however often it appears. A replay clones what it reads."""
    def once(x):
        if isinstance(x, torch.Tensor) and x.is_contiguous():
            return seen.setdefault((key((x,), {}), x.stride(), x.requires_grad), x)
        if type(x) in (dict, list, tuple):
            return {k: once(v) for k, v in x.items()} if type(x) is dict else type(x)(map(once, x))
        return x

    parts = {name: _plans_once(part, seen) for name, part in data["parts"].items()}
    return {**data, "plan": once(data["plan"]), "reach_plans": once(data["reach_plans"]), "parts": parts}


@dataclasses.dataclass
class Book:
    rubric: str = ""
    answers: dict = dataclasses.field(default_factory=dict)  # key -> the reference's parts
    grads: dict = dataclasses.field(default_factory=dict)  # key -> (grad of out, grads of the inputs that need one)
    probes: list = dataclasses.field(default_factory=list)  # diagnosis: the probes' (args, kw)
    plants: dict = dataclasses.field(default_factory=dict)  # "key|bug,bug" -> (out, weights) of that variant
    plan: dict = dataclasses.field(default_factory=dict)  # the visible checks' example plan (grading.plan): inputs only
    reach_plans: dict = dataclasses.field(default_factory=dict)  # repr(works) -> the plan drawn within those forms
    salt: bytes = b""  # what the build draws with (checks.draws): its own, never the course secret
    parts: dict = dataclasses.field(default_factory=dict)  # a rubric in parts: part name -> that part's Book

    def draws(self) -> Draws:
        return Draws(self.salt, own=True)

    def part(self, name: str) -> Book:
        """The book of a rubric's part; an empty one (every answer missing: graded after submission) for a part
        this build did not record."""
        return self.parts.get(name) or Book(rubric=f"{self.rubric}.{name}", salt=self.salt)

    def save(self, path: Path) -> None:
        data = dataclasses.asdict(self)  # the parts' books as plain dicts: data only
        torch.save(_plans_once(data, {}), path)

    @classmethod
    def load(cls, path: Path) -> Book:
        return cls._of(torch.load(path, weights_only=True))

    @classmethod
    def _of(cls, data: dict) -> Book:
        return cls(**{**data, "parts": {name: cls._of(part) for name, part in data.get("parts", {}).items()}})

    # -- diagnosis ---------------------------------------------------------------------------------------
    def record_variants(self, variants, candidates, dims: set[int]) -> None:
        """dims: the exercise's layouts (Form.dims); a probe is also recorded with a heads dim where one of them
        has it, as Grading._in_reach gives it to code that handles only that layout."""
        self.probes = [(tuple(a), dict(kw)) for a, kw in variants.probes()]
        lifted = [(reach.with_heads(a), kw) for a, kw in self.probes if a[0].dim() - 1 in dims]
        for args, kw in self.probes + lifted:
            for bugs in candidates:
                self.plants[f"{key(args, kw)}|{','.join(sorted(bugs))}"] = _frozen(variants.plant(*args, **kw, bugs=bugs))

    def variants(self, variants):
        """The exercise's Variants with the planted bugs' answers from the book: the planted-bug core is not in this
        build (grader.reference.planted), so its `plant` is never called here; no probes recorded, no diagnosis."""
        if variants is None or not self.probes:
            return None

        def plant(*args, bugs=frozenset(), **kw):
            return self.plants[f"{key(args, kw)}|{','.join(sorted(bugs))}"]

        return dataclasses.replace(variants, plant=plant, probes=lambda: [(a, dict(kw)) for a, kw in self.probes])


class _Tap(torch.autograd.Function):
    """Identity on the reference's out; its backward notes the gradients the reference gave (teacher's build)."""

    @staticmethod
    def forward(ctx, note, out, *inputs):
        ctx.note = note
        return out.detach().clone()

    @staticmethod
    def backward(ctx, g):
        return (None, None, *ctx.note(g))


class Recording(Ctx):
    """The teacher's context: answers from the reference, and writes every answer into `book`."""

    book: Book = None  # type: ignore[assignment]  # set by the builder (a dataclass field would change Ctx's signature)

    def reference(self, *args, **kw) -> tuple:
        parts = super().reference(*args, **kw)
        k = key(args, {**self.exercise.fixed_options(*args), **kw})
        self.book.answers[k] = _frozen(parts)
        needing = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
        if not needing:
            return parts

        def note(g):
            grads = torch.autograd.grad(parts[0], needing, g, retain_graph=True, allow_unused=True)
            self.book.grads[k] = (g.detach().clone(), *(None if x is None else x.detach().clone() for x in grads))
            return grads

        return (_Tap.apply(note, parts[0], *needing), *parts[1:])


class _Replay(torch.autograd.Function):
    """The recorded out; its backward gives the recorded gradients when the output gradient is the recorded one."""

    @staticmethod
    def forward(ctx, answer, out, *inputs):
        ctx.answer = answer
        return out.clone()

    @staticmethod
    def backward(ctx, g):
        return (None, None, *ctx.answer(g))


class Replaying(Ctx):
    """The student build's context: the reference's answers come from the book; an input it lacks is rejected
    while hypothesis searches (shrinking) and makes the check "graded after submission" otherwise."""

    book: Book = None  # type: ignore[assignment]  # set by the builder, as Recording's
    proving: bool = False
    misses: int = 0
    consulted: bool = False  # the plan's replay asked the reference

    @property
    def phases(self):
        """No shrinking for a check whose replay asked the reference: the book knows only the inputs the reference
        met, a shrunk input is almost never one of them, and shrinking spent seconds on rejected draws to end near
        where it began. Its case is the first failing one drawn (a known answer: its heatmap has the reference's
        weights); the verdict is the same. A check that needs no reference shrinks as in the teacher's grader."""
        return (Phase.explicit, Phase.generate) if self.consulted else super().phases

    def prove(self, strategy, prop, max_examples: int | None = None) -> None:
        self.proving, self.misses, self.consulted = True, 0, False
        try:
            super().prove(strategy, prop, max_examples)  # a Failed on a known answer is a verdict: it propagates
        except (hypothesis.errors.Unsatisfiable, hypothesis.errors.FailedHealthCheck):
            if not self.misses:
                raise
            # every input drawn was rejected: the book has none of this submission's (a layer's own structure)
        finally:
            self.proving = False
        if self.misses:
            raise GradedLater(f"{LATER}: this build holds no known answer for {self.misses} of the inputs drawn")

    def witness(self):
        self.proving = False  # the failing case's picture is drawn after hypothesis is done: a miss only loses it
        return super().witness()

    def _miss(self) -> NoReturn:
        self.misses += 1
        if self.proving:
            reject()
        raise GradedLater(f"{LATER}: this build holds no known answer for these inputs")

    def reference(self, *args, **kw) -> tuple:
        self.consulted = True
        k = key(args, {**self.exercise.fixed_options(*args), **kw})
        parts = self.book.answers.get(k)
        if parts is None:
            self._miss()
        parts = tuple(p.clone() if isinstance(p, torch.Tensor) else p for p in parts)
        needing = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
        if not needing:
            return parts

        def answer(g):
            known = self.book.grads.get(k)
            if known is None or not torch.equal(known[0], g):
                self._miss()
            return known[1:]

        return (_Replay.apply(answer, parts[0], *needing), *parts[1:])


def _context(cls, book: Book):
    def make(**fields) -> Ctx:
        ctx = cls(**fields)
        ctx.book = book
        return ctx

    return make


def recording(book: Book):
    """Makes Recording contexts that write into `book` (Grading's `context`)."""
    return _context(Recording, book)


def replaying(book: Book):
    """Makes Replaying contexts that answer from `book`."""
    return _context(Replaying, book)


@functools.cache
def book() -> Book | None:
    """This build's known answers, or None in the teacher's grader (which has the reference)."""
    return Book.load(FILE) if FILE.is_file() else None
