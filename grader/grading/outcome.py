"""What grading produces, as data: one `Outcome` per check and the `Grade` of a submission. Statuses are enums;
the words are the reports' business."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum

from grader.checks import known_answers
from grader.checks.core import Case
from grader.exercises import EXERCISES
from grader.grading.diagnosis import explain

LOADS, POLICY = "loads", "policy"  # the built-in checks' ids (grading.builtin)


class Status(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"  # a prerequisite did not pass
    NOT_RUN = "not run"  # deselected (pytest -k) or stopped early (-x)
    LATER = known_answers.LATER  # a student build cannot tell (a hidden check, an input without a known answer)


class Failure(StrEnum):
    """Why a check failed: a verdict on the function, or a submission that could not be graded in full."""

    WRONG = "wrong"  # the property does not hold: a verdict
    RAISED = "raised"  # the function raised on the check's inputs: a verdict, whose error and line say the cause
    NOT_LOADED = "not loaded"  # the file did not run or defines no entry point
    LOST = "lost"  # the worker timed out, ran out of memory or died
    GRADER = "grader error"  # a bug of ours

    @property
    def errored(self) -> bool:
        return self not in (Failure.WRONG, Failure.RAISED)


@dataclass(frozen=True)
class Run:
    """What running one check gave, before any words: the engine runs (grading.engine._run), the Outcome words it."""

    status: Status
    message: str = ""
    failure: Failure | None = None
    case: Case | None = None


@dataclass
class Outcome:
    id: str
    title: str
    status: Status
    points: float
    max_points: float
    message: str = ""
    visibility: str = "visible"
    hint: str = ""
    misconception: str = ""
    replay: str = ""  # a command that runs this check again on the same submission (failed visible checks)
    failure: Failure | None = None  # set when failed
    case: Case | None = field(default=None, compare=False, repr=False)  # the failing inputs, for the feedback's pictures

    @property
    def check(self) -> str:
        """The check's own id, without the part it belongs to in a rubric in parts ("sdpa.loads" -> "loads")."""
        return self.id.rpartition(".")[2]

    def __post_init__(self):  # a stored grade comes back as plain strings
        self.status = Status(self.status)
        self.failure = Failure(self.failure) if self.failure else None


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
    exercise: str = ""  # whose mistakes the diagnosis names
    behaviour: str = ""  # digest of its wrong answers on the diagnosis probes (diagnosis.behaviour): twins share it

    def as_dict(self) -> dict:
        d = asdict(self)
        for o in d["outcomes"]:
            del o["case"]  # tensors: not data for a report
        return d

    def mistakes(self) -> list[str]:
        """The diagnosis in words: 'zero fill: future scores are filled with 0 ...'."""
        exercise = EXERCISES.get(self.exercise)
        return [explain(d, exercise.variants if exercise else None) for d in self.diagnosis]

    def problems(self) -> str:
        """Why the submission could not be graded in full: it did not load, or a worker timed out or died."""
        loads = next((o for o in self.outcomes if o.check == LOADS and o.status is Status.FAILED), None)
        if loads is not None:  # a rubric in parts: the part's ("masked.loads failed: ...")
            return f"{loads.id} failed: " + loads.message.splitlines()[0]
        lost = [o for o in self.outcomes if o.failure is not None and o.failure.errored]
        return "; ".join(f"{o.id}: {o.message.splitlines()[0]}" for o in lost)
