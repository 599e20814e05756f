"""Check one submission before handing it in: verdict, counterexamples and hints."""

from __future__ import annotations

import sys

from grader import loader
from grader.rubric import RubricError, load


def add_arguments(p) -> None:
    p.add_argument("path", help="your .py file, notebook or folder")
    p.add_argument("--rubric", default="chapter5", help="bundled rubric name or TOML file (default: chapter5)")


def run(args) -> int:
    from grader import subject
    from grader.grading import Grading
    from grader.report import feedback, table

    try:
        rubric = load(args.rubric)
    except RubricError as e:
        print(f"attention-grader: {e}", file=sys.stderr)
        return 2
    from pathlib import Path

    if not Path(args.path).exists():
        print(f"attention-grader: {args.path}: no such file or folder", file=sys.stderr)
        return 2
    subject.warm_up()
    grade = Grading(args.path, rubric).finish()
    print(table(grade))
    for o in grade.outcomes:
        if o.status == "failed":
            print(f"\n[{o.id}] {feedback(o)}")
    failed = [o for o in grade.outcomes if o.status != "passed" and o.visibility == "visible"]
    return 1 if failed else 0
