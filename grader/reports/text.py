"""What a grade says in words: the terminal table, one check's feedback, what of the file did not run."""

from __future__ import annotations

from collections.abc import Sequence

from tabulate import tabulate

from grader.grading.outcome import Failure, Grade, Outcome, Status

STATUS = {"passed": "PASS", "failed": "FAIL", "skipped": "skip", "not run": "----"}


def reveals(o: Outcome) -> bool:
    """Hidden checks reveal nothing but pass or fail."""
    return o.visibility == "visible"


def reason(o: Outcome) -> str:
    if not reveals(o) or not o.message or o.status is Status.PASSED:
        return ""
    first = o.message.splitlines()[0]
    return first if len(first) <= 100 else first[:97] + "..."


def weak_walls(grade: Grade) -> list[str]:
    """The line every report starts with when the sandbox graded with walls down (a teacher's explicit choice)."""
    return [line for line in grade.environment[:1] if line.startswith("WEAK WALLS")]


def points(x: float) -> str:
    return f"{x:g}"


def table(grade: Grade) -> str:
    rows = [[o.id, f"{points(o.points)}/{points(o.max_points)}", STATUS.get(o.status, o.status), reason(o)] for o in grade.outcomes]
    body = tabulate(rows, headers=["check", "points", "status", "reason"], tablefmt="simple")
    return f"{body}\n\nTotal: {points(grade.score)}/{points(grade.max_score)}"


def feedback(o: Outcome, mistakes: Sequence[str] = ()) -> str:
    """The text a student sees for one check: the counterexample, the diagnosed mistakes in words (a grade-wide
    finding, Grade.mistakes), the check's usual cause, a hint, and the command that replays the case."""
    if not reveals(o):
        return str(o.status)
    if o.status is Status.PASSED:
        return "passed"
    parts = [o.message]
    if o.status is Status.FAILED:
        parts += [f"Likely mistake: {m}" for m in mistakes]
        raised = o.failure is Failure.RAISED  # one cause: the error and its line say more
        if o.misconception and not raised:
            parts.append(f"Likely cause: {o.misconception}.")
        if o.hint and not raised:
            parts.append(f"Hint: {o.hint}")
        if o.replay:
            parts.append(f"Replay: {o.replay}")
    return "\n".join(parts)


def overview(grade: Grade) -> list[str]:
    """A whole grade in a few lines for a platform's results file (Gradescope's and PrairieLearn's `output`): the
    walls when weak, the score, the likely mistakes, what of the file did not run, where it was graded."""
    lines = weak_walls(grade) + [f"{grade.submission}: {points(grade.score)}/{points(grade.max_score)} with rubric {grade.rubric}"]
    lines += [f"Likely mistake: {m}" for m in grade.mistakes()]
    return lines + left_out(grade) + ["Grading environment: " + "; ".join(grade.environment)]


def left_out(grade: Grade) -> list[str]:
    """What of the file was not run (notebook experiments, IPython syntax, missing packages) and the notes on it:
    a student whose function needs something listed here sees why it fails."""
    lines = ["Not run from your file:"] + [f"  {s}" for s in grade.skipped_code] if grade.skipped_code else []
    return lines + [f"Note: {n}" for n in grade.notes]
