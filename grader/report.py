"""What a grade looks like to people: the terminal table and Gradescope's results.json."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from tabulate import tabulate

from grader.diagnose import explain
from grader.grading import Grade, Outcome

STATUS = {"passed": "PASS", "failed": "FAIL", "skipped": "skip", "not run": "----"}


def reveals(o: Outcome) -> bool:
    """Hidden checks reveal nothing but pass or fail."""
    return o.visibility == "visible"


def reason(o: Outcome) -> str:
    if not reveals(o) or not o.message or o.status == "passed":
        return ""
    first = o.message.splitlines()[0]
    return first if len(first) <= 100 else first[:97] + "..."


def points(x: float) -> str:
    return f"{x:g}"


def table(grade: Grade) -> str:
    rows = [[o.id, f"{points(o.points)}/{points(o.max_points)}", STATUS.get(o.status, o.status), reason(o)] for o in grade.outcomes]
    body = tabulate(rows, headers=["check", "points", "status", "reason"], tablefmt="simple")
    return f"{body}\n\nTotal: {points(grade.score)}/{points(grade.max_score)}"


def feedback(o: Outcome, diagnosis: list[str] = ()) -> str:
    """The text a student sees for one check: the counterexample, the diagnosed mistake (a grade-wide finding,
    see grader/diagnose.py), the check's usual cause, a hint, and the command that replays the case."""
    if not reveals(o):
        return o.status
    if o.status == "passed":
        return "passed"
    parts = [o.message]
    if o.status == "failed":
        parts += [f"Likely mistake: {explain(d)}" for d in diagnosis]
        if o.misconception and not o.message.startswith("your function raised"):  # the error and its line say more
            parts.append(f"Likely cause: {o.misconception}.")
        if o.hint:
            parts.append(f"Hint: {o.hint}")
        if o.replay:
            parts.append(f"Replay: {o.replay}")
    return "\n".join(parts)


def left_out(grade: Grade) -> list[str]:
    """What of the file was not run (notebook experiments, IPython syntax, missing packages) and the notes on it:
    a student whose function needs something listed here sees why it fails."""
    lines = ["Not run from your file:"] + [f"  {s}" for s in grade.skipped_code] if grade.skipped_code else []
    return lines + [f"Note: {n}" for n in grade.notes]


def gradescope(grade: Grade) -> dict:
    """Gradescope's results.json. No execution_time: the same submission must give the same file every run."""
    tests = [
        {
            "name": o.id if not o.title else f"{o.id}: {o.title}",
            "score": o.points,
            "max_score": o.max_points,
            "status": "passed" if o.status == "passed" else "failed",
            "output": feedback(o, grade.diagnosis),
            "visibility": o.visibility,
            "extra_data": {"check_id": o.id, "outcome": o.status},
        }
        for o in grade.outcomes
    ]
    lines = [f"{grade.submission}: {points(grade.score)}/{points(grade.max_score)} with rubric {grade.rubric}"]
    lines += [f"Likely mistake: {explain(d)}" for d in grade.diagnosis]
    lines += left_out(grade)
    lines += ["Grading environment: " + "; ".join(grade.environment)]
    return {"score": grade.score, "max_score": grade.max_score, "output": "\n".join(lines), "tests": tests}


def write_atomic(path: str | Path, text: str) -> None:
    """Write via a temporary file and rename, so a crash never leaves half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def write_json(path: str | Path, grade: Grade) -> None:
    write_atomic(path, json.dumps(gradescope(grade), indent=2, sort_keys=True) + "\n")
