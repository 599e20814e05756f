"""The grading engine: one submission, one rubric -> one outcome per check, in dependency order.

Both the pytest plugin (one item per check) and the command line use this, so they give the same verdicts.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

import hypothesis.errors
import torch

from grader import diagnose, loader, policy, replay, walls_host
from grader.checks import CATALOGUE, Case, Ctx, Failed
from grader.exercises import EXERCISES
from grader.rubric import Rubric
from grader.subject import StudentError, Subject, WorkerLost

# The grader's tensors are tiny: intra-op threads never split them, they only add a thread wake-up to every op,
# about 10 ms each on a busy machine (measured: triu of a 4x4 mask 10 ms with 2 threads, 4 us with 1).
torch.set_num_threads(1)


FLAKY = "your function gave different results for the same inputs (is it random, or does it keep state between calls?)"


@dataclass
class Outcome:
    id: str
    title: str
    status: str  # passed | failed | skipped
    points: float
    max_points: float
    message: str = ""
    visibility: str = "visible"
    hint: str = ""
    misconception: str = ""
    replay: str = ""  # a command that runs this check again on the same submission (failed visible checks)
    case: Case | None = field(default=None, compare=False, repr=False)  # the failing inputs, for the feedback's pictures


@dataclass
class Grade:
    submission: str
    rubric: str
    outcomes: list[Outcome]
    score: float
    max_score: float
    skipped_code: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    environment: list[str] = field(default_factory=list)
    output: str = ""
    diagnosis: list[str] = field(default_factory=list)  # names of known mistakes the behaviour matches

    def as_dict(self) -> dict:
        d = asdict(self)
        for o in d["outcomes"]:
            del o["case"]  # tensors: not data for a report
        return d


def environment() -> list[str]:
    """Which walls were up around the submission's worker (they depend on the machine, see walls_host.walls)."""
    up = walls_host.walls()
    walls = ["wall-clock deadlines, address-space, CPU-time and output limits"]
    if up["mounts"] is None:
        walls.append("a private file system view (its own size-capped working folder and /tmp, the reference hidden)")
    else:
        walls.append(f"a private temporary working folder, but no private file system view ({up['mounts']})")
    if up["net"] is None:
        walls.append("no network (own network namespace)")
    else:
        walls.append(f"network NOT blocked ({up['net']})")
    if up["uid"] is None:
        walls.append("its own uid per worker, with a process cap; every process it starts is killed afterwards")
    else:
        walls.append(f"no uid of its own ({up['uid']}): leftover processes are killed by process group only")
    return walls


class Grading:
    def __init__(self, path: str | Path, rubric: Rubric, *, device: str = "cpu", defs_only: bool = False,
                 notebook_mode: str = "defs"):
        self.path = Path(path)
        self.rubric = rubric
        self.device = device
        self.defs_only = defs_only
        self.notebook_mode = notebook_mode
        self.outcomes: dict[str, Outcome] = {}
        self.source: loader.Source | None = None
        self.subject: Subject | None = None
        self.cases: dict[str, Case | None] = {}
        self.diagnosis: list[str] = []

    # -- one check -------------------------------------------------------------------------------------------
    def outcome(self, cid: str) -> Outcome:
        if cid not in self.outcomes:
            spec = self.rubric.checks[cid]
            for dep in spec.depends:
                if self.outcome(dep).status != "passed":
                    self.outcomes[cid] = self._make(cid, "skipped", f"skipped: {dep} did not pass")
                    return self.outcomes[cid]
            status, message = self._run(cid)
            self.outcomes[cid] = self._make(cid, status, message)
        return self.outcomes[cid]

    def _make(self, cid: str, status: str, message: str) -> Outcome:
        spec = self.rubric.checks[cid]
        entry = CATALOGUE.get(cid)
        return Outcome(
            id=cid,
            title=entry.title if entry else _BUILTIN_TITLES[cid],
            status=status,
            points=spec.points if status == "passed" else 0.0,
            max_points=spec.points,
            message=message,
            visibility=spec.visibility,
            hint=spec.hint or (entry.hint if entry else ""),
            misconception=entry.misconception if entry else "",
            replay=replay.command(self.path, self.rubric.origin, cid, self.defs_only, self.notebook_mode) if entry and status == "failed" and spec.visibility == "visible" else "",
            case=self.cases.get(cid),
        )

    def _run(self, cid: str) -> tuple[str, str]:
        if cid == "loads":
            return self._load()
        if cid == "policy":
            return self._policy()
        if self.subject is None and self.outcome("loads").status != "passed":  # a check that forgot `depends`
            return "skipped", "skipped: loads did not pass"
        spec = self.rubric.checks[cid]
        ctx = Ctx(
            subject=self.subject,
            exercise=EXERCISES[self.rubric.exercise],
            tolerances={k: (t.rtol, t.atol) for k, t in self.rubric.tolerances.items()},
            max_examples=spec.max_examples or self.rubric.hypothesis.max_examples,
            device=self.device,
        )
        torch.manual_seed(0)
        try:
            CATALOGUE[cid].run(ctx)
        except Failed as e:
            self.cases[cid] = e.case
            return "failed", str(e)
        except WorkerLost as e:
            return "failed", str(e)
        except hypothesis.errors.Flaky:
            return "failed", FLAKY
        except Exception as e:  # noqa: BLE001 - a grader bug must not lose the other checks' results
            return "failed", f"grader error while checking ({type(e).__name__}: {e}); please report this to your teacher"
        return "passed", ""

    def _load(self) -> tuple[str, str]:
        try:
            self.source, entry = loader.read(self.path, self.rubric.names, self.defs_only, self.notebook_mode)
        except loader.LoadError as e:
            self.source = getattr(e, "source", None)  # what definitions-only loading left out explains a missing name
            return "failed", str(e)
        self.subject = Subject(self.source, entry, self.rubric.limits, device="cuda" if self.device == "cuda" else "cpu")
        try:
            self.subject.load()
        except (StudentError, WorkerLost) as e:
            return "failed", str(e)
        return "passed", f"found {entry} in {Path(self.source.filename).name}"

    def _policy(self) -> tuple[str, str]:
        pol = self.rubric.policy
        found = policy.violations(self.source.code, pol.forbidden_imports) if self.source else []
        if self.subject is not None:
            found += [f"tried to import {name!r} while running" for name in sorted(self.subject.blocked)]
        if found:
            return "failed", f"{pol.message} ({'; '.join(found[:3])})"
        return "passed", ""

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
        loads = self.outcomes.get("loads")
        if self.subject is None or loads is None or loads.status != "passed":
            return  # a file that did not load would only be run again
        if not any(o.status == "failed" for o in self.outcomes.values()):
            return
        call = lambda q, k, v, **kw: self.subject.call(q, k, v, expect=EXERCISES[self.rubric.exercise].expect(q, k, v), **kw)
        try:
            self.diagnosis = diagnose.diagnose(self.rubric.exercise, call)
        except WorkerLost:
            self.diagnosis = []

    def summary(self) -> Grade:
        """The grade from the checks run so far; any not run (pytest -k, -x) count as 0 and say so."""
        outcomes = [
            self.outcomes.get(c) or self._make(c, "not run", "not run in this session (deselected or stopped early)")
            for c in self.rubric.order()
        ]
        score = sum(o.points for o in outcomes)
        pol = self.rubric.policy
        if "policy" in self.outcomes and self.outcomes["policy"].status == "failed":
            score = 0.0 if pol.on_violation == "zero" else max(0.0, score - pol.deduct) if pol.on_violation == "deduct" else score
        return Grade(
            submission=self.path.name,
            rubric=self.rubric.name,
            outcomes=outcomes,
            score=round(score, 4),
            max_score=self.rubric.max_score,
            skipped_code=list(self.source.skipped) if self.source else [],
            notes=(list(self.source.notes) if self.source else []) + self._output_note(),
            environment=environment(),
            output=self.subject.output() if self.subject else "",
            diagnosis=list(self.diagnosis),
        )

    def _output_note(self) -> list[str]:
        if self.subject is None or not self.subject.output_overflowed:
            return []
        kib = self.rubric.limits.output_kb
        return [f"output too large: the submission printed more than {kib} KiB; the rest was dropped"]

    def close(self) -> None:
        if self.subject is not None:
            self.subject.close()


_BUILTIN_TITLES = {
    "loads": "the file runs and defines the function",
    "policy": "the submission does not import the grader or its reference",
}
