"""Feedback files for one graded submission: Markdown and a self-contained HTML page with the same content."""

from __future__ import annotations

import html
from pathlib import Path

from grader.grading import Grade
from grader.report import STATUS, feedback, points, write_atomic


def markdown(grade: Grade) -> str:
    lines = [f"# {grade.submission}: {points(grade.score)}/{points(grade.max_score)}", "", f"Rubric: {grade.rubric}", ""]
    if grade.diagnosis:
        lines += ["Likely mistake: " + "; ".join(grade.diagnosis), ""]
    lines += ["| check | points | status |", "|---|---|---|"]
    lines += [f"| `{o.id}` | {points(o.points)}/{points(o.max_points)} | {STATUS.get(o.status, o.status)} |" for o in grade.outcomes]
    for o in grade.outcomes:
        if o.status == "failed":
            lines += ["", f"## `{o.id}`", "", "```", feedback(o), "```"]
    if grade.skipped_code:
        lines += ["", "## Not run from your file", ""] + [f"- {s}" for s in grade.skipped_code]
    lines += ["", "Grading environment: " + "; ".join(grade.environment)]
    return "\n".join(lines) + "\n"


def to_html(grade: Grade) -> str:
    rows = "".join(
        f"<tr><td><code>{html.escape(o.id)}</code></td><td>{points(o.points)}/{points(o.max_points)}</td>"
        f"<td>{STATUS.get(o.status, o.status)}</td></tr>"
        for o in grade.outcomes
    )
    details = "".join(
        f"<h2><code>{html.escape(o.id)}</code></h2><pre>{html.escape(feedback(o))}</pre>" for o in grade.outcomes if o.status == "failed"
    )
    title = html.escape(f"{grade.submission}: {points(grade.score)}/{points(grade.max_score)}")
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head><body>"
        f"<h1>{title}</h1><table>{rows}</table>{details}</body></html>\n"
    )


def write(grade: Grade, folder: str | Path) -> list[Path]:
    """feedback.md and feedback.html in `folder`."""
    folder = Path(folder)
    md, page = folder / "feedback.md", folder / "feedback.html"
    write_atomic(md, markdown(grade))
    write_atomic(page, to_html(grade))
    return [md, page]
