"""Show a rubric: its checks with their points, visibility and what each one checks (--markdown: as in
docs/rubrics.md). Exit status 2 on a bad rubric."""

from __future__ import annotations

import sys

from grader.frontends import options


def add_arguments(p) -> None:
    p.add_argument("rubric", metavar="NAME|FILE", nargs="?", default=options.DEFAULT_RUBRIC,
                   help=f"bundled rubric name or TOML file (default: {options.DEFAULT_RUBRIC})")
    p.add_argument("--markdown", action="store_true", help="as a Markdown section (docs/rubrics.md is every bundled one)")


def run(args) -> int:
    from grader.grading.rubric import RubricError, _locate, load
    from grader.reports import rubric_doc

    try:
        rubric = load(args.rubric)
        toml = _locate(args.rubric).read_text(encoding="utf-8")
    except RubricError as e:
        print(f"attention-grader: {e}", file=sys.stderr)
        return 2
    print(rubric_doc.markdown(rubric, toml) if args.markdown else rubric_doc.text(rubric), end="")
    return 0
