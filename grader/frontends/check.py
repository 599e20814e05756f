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
    """The rubric, or None after a one-line error when the path or the rubric is bad. Starts the fork server
    before anything imports torch here, so that the two imports of torch run side by side."""
    from grader.sandbox import spawn

    if not Path(args.path).exists():
        print(f"attention-grader: {args.path}: no such file or folder", file=sys.stderr)
        return None
    spawn.warm_up()
    import gc

    from grader.grading.rubric import RubricError, load

    gc.freeze()  # hypothesis' first run collects garbage: torch's million objects, frozen, are not walked
    from grader.checks.draws import SecretError
    from grader.grading.engine import default_draws

    try:
        rubric = load(args.rubric)
        default_draws()  # a course secret that was named but cannot be read: one line, before any grading
        return rubric
    except (RubricError, SecretError) as e:
        print(f"attention-grader: {e}", file=sys.stderr)
        return None


class Style:
    """ANSI colour, only for a terminal and only without NO_COLOR (https://no-color.org)."""

    def __init__(self, on: bool):
        self.on = on

    def __call__(self, text: str, code: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.on else text

    @classmethod
    def for_stdout(cls) -> "Style":
        return cls(sys.stdout.isatty() and not os.environ.get("NO_COLOR"))


MARK = {"passed": ("PASS", "32"), "failed": ("FAIL", "1;31"), "skipped": ("skip", "33"),
        "graded after submission": ("graded after submission", "36")}


def render(grade, style: Style) -> str:
    """The whole report, about one screen: failed visible checks in full, everything else one line per kind."""
    from grader.grading.engine import FLAKY
    from grader.grading.outcome import Status
    from grader.reports.text import feedback, points, weak_walls

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
        lines.append("hidden checks: " + ", ".join(f"{o.id} {style(*MARK.get(o.status, (o.status, '0')))}" for o in hidden))
    for status, label in (("passed", "passed"), ("skipped", "skipped (a prerequisite did not pass)"),
                          ("graded after submission", "graded after submission")):
        ids = [o.id for o in visible if o.status == status]
        if ids:
            lines.append(f"{style(label, MARK[status][1])}: {', '.join(ids)}")
    return "\n".join(lines)


def exit_status(grade) -> int:
    """0 when every visible check passed; hidden ones count for the score, not for the verdict a student sees."""
    later = "graded after submission"  # a student build's: not a verdict either way
    return 0 if all(o.status in ("passed", later) for o in grade.outcomes if o.visibility == "visible") else 1


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
