"""Check one submission before handing it in: verdict, counterexamples, the likely mistake and hints.

Exit status 0 when every visible check passes, 1 when one does not, 2 on bad input. Hidden checks are run and
counted but show only their name and pass/fail.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from grader.frontends import options


def add_arguments(p) -> None:
    p.add_argument("path", help="your .py file, notebook or folder")
    options.add_submission_options(p.add_argument)
    p.add_argument("--feedback", metavar="DIR", help="also write feedback.md and feedback.html (with heatmaps) here")


def prepare(args):
    """The rubric, or None after a one-line error when the path, the rubric, the course secret or the walls are
    bad (frontends.startup)."""
    from grader.frontends.startup import CannotStart, start

    if not Path(args.path).exists():
        print(f"attention-grader: {args.path}: no such file or folder", file=sys.stderr)
        return None
    try:
        return start(args.rubric)
    except CannotStart as e:
        print(f"attention-grader: {e}", file=sys.stderr)
        return None


class Style:
    """ANSI colour, only for a terminal and only without NO_COLOR (https://no-color.org)."""

    def __init__(self, on: bool):
        self.on = on

    def __call__(self, text: str, code: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.on else text

    @classmethod
    def for_stdout(cls) -> Style:
        return cls(sys.stdout.isatty() and not os.environ.get("NO_COLOR"))


def render(grade, style: Style) -> str:
    """The whole report, about one screen: failed visible checks in full, everything else one line per kind."""
    from grader.grading.engine import FLAKY
    from grader.grading.outcome import Status
    from grader.reports.text import feedback, points, weak_walls

    mark = {Status.PASSED: ("PASS", "32"), Status.FAILED: ("FAIL", "1;31"), Status.SKIPPED: ("skip", "33"),
            Status.LATER: (str(Status.LATER), "36")}
    visible = [o for o in grade.outcomes if o.visibility == "visible"]
    hidden = [o for o in grade.outcomes if o.visibility != "visible"]
    passed = sum(o.status is Status.PASSED for o in grade.outcomes)
    ok = exit_status(grade) == 0
    verdict = style("ready to hand in" if ok else "not yet", "1;32" if ok else "1;31")
    lines = [style(w, "1;31") for w in weak_walls(grade)]
    lines += [f"{grade.submission}: {points(grade.score)}/{points(grade.max_score)}, {passed} of {len(grade.outcomes)} checks passed: {verdict}"]
    lines += [style(f"Likely mistake: {m}", "1;33") for m in grade.mistakes()]
    lines.append("")
    for o in visible:  # no blank line between failures: six of them must still fit on one screen
        if o.status is Status.FAILED:
            lines += [f"{style('FAIL', '1;31')} {style(o.id, '1')} ({points(o.points)}/{points(o.max_points)}): {o.title}"]
            # a random function fails many checks for one reason, which the first line already names
            text = f"{o.message}\nReplay: {o.replay}" if o.message == FLAKY and o.replay else feedback(o)
            lines += ["  " + line for line in text.splitlines()]
    if lines[-1]:
        lines.append("")
    if hidden:
        lines.append("hidden checks: " + ", ".join(f"{o.id} {style(*mark.get(o.status, (o.status, '0')))}" for o in hidden))
    for status, label in ((Status.PASSED, "passed"), (Status.SKIPPED, "skipped (a prerequisite did not pass)"),
                          (Status.LATER, str(Status.LATER))):
        ids = [o.id for o in visible if o.status is status]
        if ids:
            lines.append(f"{style(label, mark[status][1])}: {', '.join(ids)}")
    return "\n".join(lines)


def exit_status(grade) -> int:
    """0 when every visible check passed (or is a student build's "graded after submission": not a verdict either
    way); hidden ones count for the score, not for the verdict a student sees."""
    from grader.grading.outcome import Status

    done = (Status.PASSED, Status.LATER)
    return 0 if all(o.status in done for o in grade.outcomes if o.visibility == "visible") else 1


def run(args) -> int:
    rubric = prepare(args)
    if rubric is None:
        return 2
    from grader.grading.engine import Grading
    from grader.reports import feedback_page

    grade = Grading(args.path, rubric, reading=options.reading(vars(args).get)).finish()
    print(render(grade, Style.for_stdout()))
    if args.feedback:
        print(f"feedback: {feedback_page.write(grade, args.feedback)[1]}")
    return exit_status(grade)
