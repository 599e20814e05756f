"""The grading process behind `pytest --submission`: `python -P -m grader.frontends.pytest_grading`, started by the pin
(frontends.pytest_pin) as the `pytest` program starts, or else as pytest parses arguments that name --submission, so
that its import of torch runs beside pytest's own start-up rather than after it. It grades as `check` does, its fork
server a fork of it; pytest's process imports no torch, and talks to it a line of JSON each way:

    {"start": {"submission", "rubric", "device", "reading"}}  ->  {"order": [check ids]}, or {"error": one line}
    {"plan": [the check ids pytest will run, in order]}       ->  {"outcome": id, "verdict", "text"} for each, as graded
    {"finish": {"grade_json": path or null, "ran": [ids]}}    ->  {"title", "lines"}, or {"error": one line}; it ends

The checks are graded as soon as pytest is about to run their items, each outcome sent as it is known, so pytest
reports one while the next is graded. Where pytest ran fewer than planned (-x, Ctrl-C), the grade is that of the
ones it ran, graded again alone, as a lazy grading would have had them. The words come from here (reports.text), as
in every other front end.
"""

from __future__ import annotations

import json
import os
import signal
import sys


def main() -> int:
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # whatever else prints goes to pytest's stderr, never into the replies
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is pytest's: it still asks for the finish, or goes
    from grader.frontends import ending
    from grader.sandbox import spawn

    ending.die_with(os.getppid())  # pytest's process, which started this one from its main thread

    spawn.warm_up()  # before anything is read: the fork server is a fork of this process once torch is imported
    import grader.grading.engine  # noqa: F401 - while pytest loads its plugins

    def say(reply: dict) -> None:
        replies.write(json.dumps(reply) + "\n")
        replies.flush()

    grading, start, plan = None, {}, []
    for line in sys.stdin:
        req = json.loads(line)
        if "start" in req:
            start = req["start"]
            grading, reply = _start(start)
            say(reply)
        elif "plan" in req and grading is not None:
            plan = req["plan"]
            for cid in plan:
                say({"outcome": cid, **_outcome(grading, cid)})
        elif "finish" in req and grading is not None:
            ran = req["finish"]["ran"]
            if ran != plan:  # pytest stopped early: the grade is of the checks it ran, as if no other had run
                grading.close()
                grading = _grading(start, grading.rubric)
                for cid in ran:
                    grading.outcome(cid)
            say(_finish(grading, req["finish"]["grade_json"]))
            return 0
        else:
            say({"error": f"attention-grader: the grading process was asked {line[:80]!r}"})
    if grading is not None:  # pytest went away without the finish
        grading.close()
    return 0


def _start(start: dict):
    from grader.frontends import startup

    try:
        rubric = startup.start(start["rubric"])
    except startup.CannotStart as e:
        return None, {"error": str(e)}
    if start["device"] == "cuda":
        import torch

        if not torch.cuda.is_available():
            return None, {"error": "--device cuda: no CUDA device is available on this machine"}
    return _grading(start, rubric), {"order": rubric.order()}


def _grading(start: dict, rubric):
    from grader.grading.engine import Grading
    from grader.submission.reading import Reading

    return Grading(start["submission"], rubric, device=start["device"], reading=Reading(**start["reading"]))


def _outcome(grading, cid: str) -> dict:
    from grader.grading.outcome import Status
    from grader.reports.text import feedback

    o = grading.outcome(cid)
    if o.status in (Status.SKIPPED, Status.LATER):
        return {"verdict": "skipped", "text": o.message}
    if o.status is Status.FAILED:
        return {"verdict": "failed", "text": feedback(o)}
    return {"verdict": "passed", "text": ""}


def _finish(grading, grade_json: str | None) -> dict:
    from grader.reports.gradescope import write_json
    from grader.reports.text import left_out, table

    try:
        grading.diagnose()  # needs the worker, so before close
    finally:
        grading.close()
    grade = grading.summary()
    if grade_json:
        try:
            write_json(grade_json, grade)
        except OSError as e:
            return {"error": f"--grade-json {grade_json}: {e.strerror or e}"}
    lines = [table(grade), *left_out(grade), *(f"Likely mistake: {m}" for m in grade.mistakes())]
    return {"title": f"attention-grader: {grade.submission} ({grading.rubric.name})", "lines": lines}


if __name__ == "__main__":
    from grader.frontends import ending

    code = main()
    ending.exit_now(code)
    sys.exit(code)
