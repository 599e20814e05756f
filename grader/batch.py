"""Grade every submission in a folder and print the gradebook."""

from __future__ import annotations

import sys
from pathlib import Path

from grader.rubric import RubricError, load


def add_arguments(p) -> None:
    p.add_argument("dirs", nargs="+", help="folders whose direct children are submissions")
    p.add_argument("--rubric", default="chapter5", help="bundled rubric name or TOML file (default: chapter5)")
    p.add_argument("--out", default="grades", help="output folder (default: grades)")


def submissions(dirs: list[str]) -> list[Path]:
    found = []
    for d in dirs:
        for child in sorted(Path(d).iterdir()):
            if child.name.startswith((".", "_")) or child.name == "README.md":
                continue
            if child.is_dir() or child.suffix in (".py", ".ipynb"):
                found.append(child)
    return found


def run(args) -> int:
    from tabulate import tabulate

    from grader import subject
    from grader.grading import Grading
    from grader.report import write_json

    try:
        rubric = load(args.rubric)
    except RubricError as e:
        print(f"attention-grader: {e}", file=sys.stderr)
        return 2
    for d in args.dirs:
        if not Path(d).is_dir():
            print(f"attention-grader: {d}: not a folder", file=sys.stderr)
            return 2
    subject.warm_up()
    rows = []
    for path in submissions(args.dirs):
        grade = Grading(path, rubric).finish()
        write_json(Path(args.out) / path.name / "results.json", grade)
        failed = ", ".join(o.id for o in grade.outcomes if o.status == "failed")
        rows.append([path.name, f"{grade.score:g}/{grade.max_score:g}", failed])
    print(tabulate(rows, headers=["submission", "score", "failed checks"]))
    return 0
