"""The options more than one front end offers, declared once; `add` is argparse's `add_argument` or pytest's
`addoption`, which take the same keywords."""

from __future__ import annotations

from grader.grading import DEFAULT_RUBRIC
from grader.submission.reading import Reading, add_options as add_reading


def add_rubric(add) -> None:
    add("--rubric", default=DEFAULT_RUBRIC, metavar="NAME|FILE",
        help=f"bundled rubric name or TOML file (default: {DEFAULT_RUBRIC})")


def add_submission_options(add) -> None:
    """--rubric and how the submission's code is read."""
    add_rubric(add)
    add_reading(add)


def reading(get) -> Reading:
    return Reading.from_options(get)


__all__ = ["DEFAULT_RUBRIC", "add_reading", "add_rubric", "add_submission_options", "reading"]
