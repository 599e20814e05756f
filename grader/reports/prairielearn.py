"""PrairieLearn's results.json for one grade, or for a submission the grader could not grade.

The format is PrairieLearn's external grading results (docs/externalGrading.md in PrairieLearn/PrairieLearn,
"Grading results"): `score` in [0, 1] is the only field it needs; `gradable: false` marks a job that could not be
graded (no points awarded or lost, no attempt used) with `format_errors`; `message` and `output` are shown above
the tests, and each test has `name`, `description`, `points`, `max_points`, `message` and `output`, which the
<pl-external-grader-results> element renders. PrairieLearn rejects a file over 1 MB (apps/grader-host: "The grading
results were larger than 1MB"), so every text is capped. Hidden checks show only pass or fail, as on Gradescope.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from grader.grading.outcome import Grade
from grader.reports.files import write_atomic
from grader.reports.text import feedback, overview, points, reason

TEXT_CAP = 20_000  # characters of one test's message or output: 17 checks stay far below PrairieLearn's 1 MB
OUTPUT_CAP = 60_000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PLTest(_Strict):
    name: str
    description: str = ""
    points: float = Field(ge=0)
    max_points: float = Field(ge=0)
    message: str = ""
    output: str = ""


class PLResults(_Strict):
    """What this grader writes: a subset of the documented fields (no images)."""

    gradable: bool
    score: float = Field(ge=0, le=1)
    message: str = ""
    output: str = ""
    format_errors: list[str] = []
    tests: list[PLTest] = []


def _cap(text: str, n: int = TEXT_CAP) -> str:
    return text if len(text) <= n else text[:n] + f"\n... ({len(text) - n} more characters cut)"


def prairielearn(grade: Grade) -> dict:
    """PrairieLearn's results for a graded submission: the score as the fraction of the rubric's points."""
    mistakes = grade.mistakes()
    tests = [
        PLTest(name=o.id, description=o.title, points=o.points, max_points=o.max_points,
               message=_cap(reason(o) or str(o.status)), output=_cap(feedback(o, mistakes)))
        for o in grade.outcomes
    ]
    head = f"{points(grade.score)}/{points(grade.max_score)} points with rubric {grade.rubric}"
    results = PLResults(gradable=True, score=min(1.0, grade.score / grade.max_score) if grade.max_score else 0.0,
                        message="; ".join([head] + [f"likely mistake: {m}" for m in mistakes]),
                        output=_cap("\n".join(overview(grade)), OUTPUT_CAP), tests=tests)
    return results.model_dump()


def not_gradable(reason_: str, output: str = "") -> dict:
    """The results of a job the grader itself could not run: nothing awarded or lost, the reason shown."""
    return PLResults(gradable=False, score=0.0, message=_cap(reason_), format_errors=[_cap(reason_)],
                     output=_cap(output, OUTPUT_CAP)).model_dump()


def valid(path: str | Path) -> bool:
    """Whether `path` holds results this module would write."""
    try:
        PLResults.model_validate(json.loads(Path(path).read_text(encoding="utf-8")))
    except (OSError, ValueError):  # pydantic's ValidationError is a ValueError
        return False
    return True


def write_json(path: str | Path, results: dict) -> None:
    write_atomic(path, json.dumps(PLResults.model_validate(results).model_dump(), indent=2, sort_keys=True) + "\n")
