"""The grading engine: one submission, one rubric -> one outcome per check, in dependency order.

Both the pytest plugin (one item per check) and the command line use this, so they give the same verdicts.
"""

from __future__ import annotations

import functools
import inspect
import shlex
import shutil
from dataclasses import replace
from pathlib import Path

import hypothesis.errors
import torch

from grader.checks import draws as drawing, known_answers, reach as reaching
from grader.checks.core import Ctx, Failed
from grader.checks.replay import Replay
from grader.exercises import EXERCISES
from grader.grading import DEFAULT_RUBRIC, build as builds, diagnosis, plan as plans
from grader.grading.builtin import BUILTIN, LOADS, POLICY
from grader.grading.outcome import Failure, Grade, Outcome, Run, Status
from grader.grading.rubric import Rubric
from grader.sandbox import confinement
from grader.sandbox.client import Subject, WorkerLost
from grader.sandbox.wire import Kind
from grader.submission import staging
from grader.submission.reading import Reading
from grader.submission.source import Source

torch.set_num_threads(1)  # the grader's tensors are tiny: more threads only add a wake-up to every op


FLAKY = "your function gave different results for the same inputs (is it random, or does it keep state between calls?)"


def environment() -> list[str]:
    """Which walls were up around the submission's worker (they depend on the machine, see confinement.walls)."""
    return confinement.environment()


def default_draws() -> drawing.Draws:
    """A student build's own draws, else the course secret's (SecretError when one is named but unusable)."""
    return builds.here().draws()


def replay_command(path: str | Path, rubric: str, check_id: str, reading: Reading) -> str:
    """The one-line command that replays `check_id` on `path`, with the options that read its code the same way."""
    cmd = shlex.join(["attention-grader", "replay", str(path), "--check", check_id, *reading.argv()])
    return cmd if rubric == DEFAULT_RUBRIC else f"{cmd} --rubric {shlex.quote(rubric)}"


class Grading:
    def __new__(cls, path, rubric: Rubric, **kw):
        # a rubric in parts grades each part on its own: every front end takes one Grading either way
        return super().__new__(Parts if rubric.parts and cls is Grading else cls)

    def __init__(self, path: str | Path, rubric: Rubric, *, device: str = "cpu", reading: Reading = Reading(),
                 planned: bool = True, build: builds.Teacher | None = None, staged: staging.Staged | None = None,
                 draws: drawing.Draws | None = None, others: tuple[str, ...] = ()):
        """path: the submission as the caller names it; staged: its copy, when the caller staged it already (a
        batch hashes the copy first), else it is staged here when it loads, and removed at close.
        planned: replay the rubric's example plan (same verdicts; hypothesis only where one fails).
        build: the teacher's grader or a student build (grading.build), this installation's by default.
        draws: what seeds the examples (checks.draws): the build's (the course secret, a student build's salt).
        others: the entry points of the rubric's other parts (Parts), where a missing one belongs (loader.read)."""
        self.path = Path(path)
        self.staged = staged
        self.scratch: str | None = None  # the folder of a copy staged here
        self.planned = planned
        self.recorded: dict[str, list] | None = None  # set while grading the reference records the plan
        self.build = build or builds.here()
        self.draws = draws or self.build.draws()
        self.rubric = rubric
        self.exercise = EXERCISES[rubric.exercise].configured(rubric.conventions)
        self.catalogue = {**BUILTIN, **self.exercise.catalogue}
        self.device = device
        self.reading = reading
        self.others = others
        self.outcomes: dict[str, Outcome] = {}
        self.source: Source | None = None
        self.subject: Subject | None = None
        self.diagnosis: list[str] = []
        self.behaviour = ""  # the digest of its wrong answers on the diagnosis probes (set by diagnose)
        self.reach: reaching.Reach | None = None  # the input forms the function handles, measured once
        self.notes: list[str] = []  # what the checks found worth saying that costs nothing

    # -- one check: run it (a Run), then word it (an Outcome) --------------------------------------------------
    def grading_of(self, cid: str) -> tuple[Grading, str]:
        """The Grading that runs check `cid` (its subject, its exercise) and the check's id there: this one, as is."""
        return self, cid

    def outcome(self, cid: str) -> Outcome:
        if cid not in self.outcomes:
            self.outcomes[cid] = self._make(cid, self._blocked(cid) or self._run(cid))
        return self.outcomes[cid]

    def _blocked(self, cid: str) -> Run | None:
        """Why `cid` does not run: a prerequisite that did not pass (or is graded later), or no input form works."""
        for dep in self.rubric.checks[cid].depends:
            status = self.outcome(dep).status
            if status is Status.LATER:  # its verdict decides whether this one runs
                return Run(Status.LATER, f"{Status.LATER}: depends on {dep}")
            if status is not Status.PASSED:
                return Run(Status.SKIPPED, f"skipped: {dep} did not pass")
        if cid not in BUILTIN and self.subject is None and self.outcome(LOADS).status is not Status.PASSED:
            return Run(Status.SKIPPED, f"skipped: {LOADS} did not pass")  # a check that forgot `depends`
        if cid not in BUILTIN and cid != reaching.CHARGED and (reach := self._measure()) is not None and reach.none:
            return Run(Status.SKIPPED, f"skipped: your function handles none of the input forms (see {reaching.CHARGED})")
        return None

    def _run(self, cid: str) -> Run:
        """Run one check; what it raised becomes a Run's status and failure (pytest's CallInfo), no words added."""
        if cid in BUILTIN:
            return self.catalogue[cid].run(self)
        spec = self.rubric.checks[cid]
        replay = Replay(cid, self.draws, self.plan.get(cid), [] if self.recorded is not None else None,
                        known=self.build.known)
        if replay.recording is not None and self.recorded is not None:
            self.recorded[cid] = replay.recording
        ctx = self._ctx(spec.max_examples or self.rubric.hypothesis.max_examples, replay=replay)
        ctx.reach = self._measure()
        torch.manual_seed(0)
        try:
            self.catalogue[cid].run(ctx)
        except Failed as e:
            raised = e.error is not None and e.error.kind is not Kind.BAD_OUTPUT
            return Run(Status.FAILED, str(e), Failure.RAISED if raised else Failure.WRONG, e.case)
        except WorkerLost as e:
            return Run(Status.FAILED, str(e), Failure.LOST)
        except hypothesis.errors.Flaky:
            return Run(Status.FAILED, FLAKY, Failure.WRONG)
        except known_answers.GradedLater as e:
            return Run(Status.LATER, str(e))
        except Exception as e:  # noqa: BLE001 - a grader bug must not lose the other checks' results
            return Run(Status.FAILED, f"grader error while checking ({type(e).__name__}: {e}); please report this to "
                                      "your teacher", Failure.GRADER)
        self.notes += [n for n in ctx.notes if n not in self.notes]  # a failed check's notes would only distract
        return Run(Status.PASSED)

    def _make(self, cid: str, run: Run) -> Outcome:
        spec, entry = self.rubric.checks[cid], self.catalogue[cid]
        shown = run.status is Status.FAILED and spec.visibility == "visible" and cid not in BUILTIN
        return Outcome(
            id=cid,
            title=entry.title,
            status=run.status,
            points=spec.points if run.status is Status.PASSED else 0.0,
            max_points=spec.points,
            message=run.message,
            visibility=spec.visibility,
            hint=spec.hint or entry.hint,
            misconception=entry.misconception,
            replay=replay_command(self.path, self.rubric.origin, cid, self.reading) if shown else "",
            failure=run.failure if run.status is Status.FAILED else None,
            case=run.case,
        )

    @functools.cached_property
    def plan(self) -> dict[str, list]:
        """What the checks replay: drawn within the input forms the submission handles, as its checks draw them, so
        code that handles only some forms (most adapted public code) replays too (read once its reach is measured)."""
        if not self.planned:
            return {}
        reach = self._measure()  # None before the submission loads: every form
        works = tuple(reach.works) if reach and reach.works and reach.works != self.exercise.forms() else None
        try:
            return self.build.plan(self.rubric, self.draws, lambda: record_plan(self.rubric, self.draws, works), works)
        except (Exception, WorkerLost):  # noqa: BLE001 - without a plan hypothesis draws the same examples, slower
            return {}

    def _ctx(self, max_examples: int, **extra) -> Ctx:
        return self.build.context(
            subject=self.subject,
            exercise=self.exercise,
            tolerances={k: (t.rtol, t.atol) for k, t in self.rubric.tolerances.items()},
            max_examples=max_examples,
            device=self.device,
            **extra,
        )

    def _measure(self) -> reaching.Reach | None:
        """The submission's reach, measured once on a loaded subject and charged to reaching.CHARGED (None before it
        loads, or for a rubric without that check: then every check draws every form, as without it)."""
        if self.reach is None and self.subject is not None and reaching.CHARGED in self.rubric.checks:
            torch.manual_seed(0)
            try:
                self.reach = reaching.measure(self._ctx(1, replay=Replay(draws=self.draws)))
            except WorkerLost as e:  # a hang, a crash, the memory limit: no form can be said to work
                self.reach = reaching.Reach(fails={f: str(e) for f in self.exercise.forms()}, lost=str(e))
        return self.reach

    # -- the whole rubric ------------------------------------------------------------------------------------
    def finish(self) -> Grade:
        try:
            for cid in self.rubric.order():
                self.outcome(cid)
            self.diagnose()
        finally:
            self.close()
        return self.summary()

    def diagnose(self) -> None:
        """Name the known mistake behind the failures, while the worker is still there to ask."""
        loads = self.outcomes.get(LOADS)
        if self.subject is None or loads is None or loads.status is not Status.PASSED:
            return  # a file that did not load would only be run again
        if not any(o.status is Status.FAILED for o in self.outcomes.values()):
            return
        call = lambda *args, **kw: self.subject.call(*args, expect=self.exercise.expect(*args, **kw), **kw)[:2]  # noqa: E731
        try:
            found = diagnosis.examine(self._in_reach(self.build.variants(self.exercise)), call)
            self.diagnosis, self.behaviour = found.mistakes, found.behaviour
        except WorkerLost:
            self.diagnosis = []

    def _in_reach(self, variants):
        """The variants with their probes in a layout the function handles: a heads dim of 1 added to q, k and v
        when it handles 4-D inputs only (the GPT-2 family), so that its mistakes can still be named."""
        if variants is None or self.reach is None or not self.reach.works:
            return variants
        dims = {f.dims for f in self.reach.works}

        def probes():
            found = []
            for args, kw in variants.probes():
                n = args[0].dim() - 2
                found.append((reaching.with_heads(args) if n not in dims and n + 1 in dims else args, kw))
            return found

        return replace(variants, probes=probes)

    def summary(self) -> Grade:
        """The grade from the checks run so far; any not run (pytest -k, -x) count as 0 and say so."""
        outcomes = [
            self.outcomes.get(c) or self._make(c, Run(Status.NOT_RUN, "not run in this session (deselected or stopped early)"))
            for c in self.rubric.order()
        ]
        score = sum(o.points for o in outcomes)
        pol = self.rubric.policy
        if POLICY in self.outcomes and self.outcomes[POLICY].status is Status.FAILED:
            score = 0.0 if pol.on_violation == "zero" else max(0.0, score - pol.deduct) if pol.on_violation == "deduct" else score
        return Grade(
            submission=self.path.name,
            rubric=self.rubric.name,
            outcomes=outcomes,
            score=round(score, 4),
            max_score=self.rubric.max_score,
            skipped_code=list(self.source.skipped) if self.source else [],
            notes=(list(self.source.notes) if self.source else []) + self._output_note() + self.notes,
            environment=environment() + [self.draws.line()],
            output=self.subject.output() if self.subject else "",
            diagnosis=list(self.diagnosis),
            behaviour=self.behaviour,
            exercise=self.exercise.name,
        )

    def _output_note(self) -> list[str]:
        if self.subject is None or not self.subject.output_overflowed:
            return []
        kib = self.rubric.limits.output_kb
        return [f"output too large: the submission printed more than {kib} KiB; the rest was dropped"]

    def close(self) -> None:
        if self.subject is not None:
            self.subject.close()
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None


def record_plan(rubric: Rubric, draws: drawing.Draws, works: tuple | None = None) -> dict[str, list]:
    """The examples of every check the reference passes, drawn as they are for any submission that passes it and
    handles the input forms `works` (all of them when None). The reference's file defines the exercise's entry
    points, not a rubric's own (a CS336 part's adapter): it is graded by those, which draw the same examples."""
    fn = inspect.unwrap(EXERCISES[rubric.exercise].reference())
    own = rubric.model_copy(update={"entry_points": []})
    grading = Grading(inspect.getsourcefile(fn) or "", own, planned=False, draws=draws)
    if works:
        grading.reach = reaching.Reach(works=list(works))  # its checks draw as they do for such a submission
    return plans.passed(grading)


class Parts(Grading):
    """A rubric in parts (CS336: SDPA and the layer): each part a Grading of its own on the same submission, one
    after the other; one grade, the parts' check ids and titles prefixed by the part's name."""

    def __init__(self, path: str | Path, rubric: Rubric, *, reading: Reading = Reading(),
                 build: builds.Teacher | None = None, **kw):
        """build: this installation's by default; each part is graded by its `part(name)` (a student build's part
        answers from that part's book)."""
        self.path, self.rubric, self.reading = Path(path), rubric, reading
        self.build = build or builds.here()
        others = lambda name: tuple(n for p, r in rubric.parts.items() if p != name for n in r.names)  # noqa: E731
        self.parts = {name: Grading(path, part, reading=reading, others=others(name), build=self.build.part(name), **kw)
                      for name, part in rubric.parts.items()}
        self.outcomes: dict[str, Outcome] = {}

    def grading_of(self, cid: str) -> tuple[Grading, str]:
        """A "part.check" id's part (its own subject and exercise) and the check's id in it; KeyError for no such part."""
        name, _, inner = cid.partition(".")
        return self.parts[name], inner

    def outcome(self, cid: str) -> Outcome:
        if cid not in self.outcomes:
            part, inner = self.grading_of(cid)
            self.outcomes[cid] = self._prefixed(cid.partition(".")[0], part.outcome(inner))
        return self.outcomes[cid]

    def _prefixed(self, name: str, o: Outcome) -> Outcome:
        cid = f"{name}.{o.id}"
        replay = replay_command(self.path, self.rubric.origin, cid, self.reading) if o.replay else ""
        return replace(o, id=cid, title=f"{name}: {o.title}", replay=replay)

    def finish(self) -> Grade:
        for g in self.parts.values():
            g.finish()
        return self.summary()

    def diagnose(self) -> None:
        for g in self.parts.values():
            g.diagnose()

    def close(self) -> None:
        for g in self.parts.values():
            g.close()

    def summary(self) -> Grade:
        grades = {name: g.summary() for name, g in self.parts.items()}
        first = next(iter(grades.values()))
        said = lambda name, lines: [f"{name}: {line}" for line in lines]  # noqa: E731
        return replace(
            first,
            rubric=self.rubric.name,
            outcomes=[self._prefixed(name, o) for name, g in grades.items() for o in g.outcomes],
            score=round(sum(g.score for g in grades.values()), 4),
            max_score=self.rubric.max_score,
            skipped_code=list(dict.fromkeys(c for g in grades.values() for c in g.skipped_code)),
            notes=[n for name, g in grades.items() for n in said(name, g.notes)],
            output="".join(g.output for g in grades.values()),
            diagnosis=[d for g in grades.values() for d in g.diagnosis],
            behaviour=":".join(g.behaviour for g in grades.values() if g.behaviour),
        )
