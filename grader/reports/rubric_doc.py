"""A rubric in words, from its data: the exercise's contract (its module's docstring), the rubric's own comments
and one row per check with its points, visibility and title. docs/rubrics.md is this for every bundled rubric
(`attention-grader rubric NAME --markdown`; tests/reports/test_rubric_doc.py keeps it current)."""

from __future__ import annotations

import sys
from pathlib import Path

from tabulate import tabulate

from grader.exercises import EXERCISES
from grader.grading.builtin import BUILTIN
from grader.grading.rubric import Rubric
from grader.reports.text import points

HEADER = """# The bundled rubrics

Generated from `rubrics/*.toml` and each check's title (`attention-grader rubric NAME --markdown`); a course's own
rubric is a copy of one of these files with other points, visibility, limits or checks.
"""


def rows(rubric: Rubric) -> list[list[str]]:
    if rubric.parts:  # a rubric in parts: each part's rows, their ids prefixed as the grade shows them
        return [[f"`{name}.{c.strip('`')}`", *rest] for name, part in rubric.parts.items() for c, *rest in rows(part)]
    catalogue = {**BUILTIN, **EXERCISES[rubric.exercise].catalogue}
    return [[f"`{cid}`", points(spec.points), spec.visibility, catalogue[cid].title] for cid, spec in rubric.checks.items()]


def comments(toml: str) -> str:
    """The comment lines a rubric file starts with, as a paragraph."""
    lines = []
    for line in toml.splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    return "\n".join(lines[1:] if lines and lines[0].endswith("points.") else lines).strip()


def contract(rubric: Rubric) -> str:
    """The docstring of the module that builds the rubric's exercise: its function's contract."""
    exercise = EXERCISES[rubric.exercise]
    module = next(m for n, m in sorted(sys.modules.items())
                  if n.startswith("grader.exercises.") and getattr(m, "EXERCISE", None) is exercise)
    return (module.__doc__ or "").strip()


def markdown(rubric: Rubric, toml: str) -> str:
    table = tabulate(rows(rubric), headers=["check", "points", "visibility", "property"], tablefmt="github")
    said = [f"Part `{name}`: exercise `{part.exercise}`, entry points {', '.join(f'`{n}`' for n in part.names)}."
            for name, part in rubric.parts.items()] or [
        f"Exercise `{rubric.exercise}`, entry points {', '.join(f'`{n}`' for n in rubric.names)}.", contract(rubric)]
    parts = [f"## {rubric.title or rubric.name} (`--rubric {rubric.name}`, {points(rubric.max_score)} points)",
             *said, comments(toml), table]
    return "\n\n".join(p for p in parts if p) + "\n"


def text(rubric: Rubric) -> str:
    body = tabulate([[c.strip("`"), p, v, t] for c, p, v, t in rows(rubric)], headers=["check", "points", "visibility", "property"])
    return f"{rubric.name}: {rubric.title} ({points(rubric.max_score)} points, exercise {rubric.exercise})\n{body}\n"


def bundled(folder: Path) -> str:
    """docs/rubrics.md: every rubric in `folder`, by name."""
    from grader.grading.rubric import load

    return HEADER + "".join("\n" + markdown(load(str(p)), p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.toml")))
