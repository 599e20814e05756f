"""Gradescope's results.json for one grade (the format the plugin's --grade-json and the batch both write)."""

from __future__ import annotations

import json
from pathlib import Path

from grader.grading.outcome import Grade, Status
from grader.reports.files import write_atomic
from grader.reports.text import feedback, overview


def gradescope(grade: Grade) -> dict:
    """Gradescope's results.json. No execution_time: the same submission must give the same file every run."""
    tests = [
        {
            "name": o.id if not o.title else f"{o.id}: {o.title}",
            "score": o.points,
            "max_score": o.max_points,
            "status": "passed" if o.status is Status.PASSED else "failed",
            "output": feedback(o, grade.mistakes()),
            "visibility": o.visibility,
            "extra_data": {"check_id": o.id, "outcome": str(o.status)},
        }
        for o in grade.outcomes
    ]
    return {"score": grade.score, "max_score": grade.max_score, "output": "\n".join(overview(grade)), "tests": tests}


def write_json(path: str | Path, grade: Grade) -> None:
    write_atomic(path, json.dumps(gradescope(grade), indent=2, sort_keys=True) + "\n")
