"""Feedback files for one graded submission: Markdown and a self-contained HTML page with the same content, with
the heatmap of the smallest failing case (reports.heatmap) when there is one."""

from __future__ import annotations

import base64
import html
from pathlib import Path

from grader.grading.outcome import Grade, Outcome, Status
from grader.reports.files import write_atomic
from grader.reports.heatmap import heatmap, pictured
from grader.reports.text import STATUS, feedback, left_out, points, reveals, weak_walls

PICTURE = "heatmap.png"


def _sections(grade: Grade) -> tuple[list[str], list[tuple[Outcome, str]], list[str]]:
    """What both formats say: the head lines, (failed check, its feedback) and the tail lines."""
    head = weak_walls(grade) + [f"Rubric: {grade.rubric}"] + [f"Likely mistake: {m}" for m in grade.mistakes()]
    failed = [(o, feedback(o)) for o in grade.outcomes if o.status is Status.FAILED and reveals(o)]
    tail = left_out(grade) + ["Grading environment: " + "; ".join(grade.environment)]
    return head, failed, tail


def _title(grade: Grade) -> str:
    return f"{grade.submission}: {points(grade.score)}/{points(grade.max_score)}"


def markdown(grade: Grade, picture: Outcome | None = None) -> str:
    head, failed, tail = _sections(grade)
    lines = [f"# {_title(grade)}", ""] + [f"{h}  " for h in head] + ["", "| check | points | status |", "|---|---|---|"]
    lines += [f"| `{o.id}` | {points(o.points)}/{points(o.max_points)} | {STATUS.get(o.status, o.status)} |" for o in grade.outcomes]
    if picture is not None:
        lines += ["", f"## The smallest failing case ({picture.id})", "", f"![your weights beside the reference's]({PICTURE})"]
    for o, text in failed:
        lines += ["", f"## `{o.id}`: {o.title}", "", "```", text, "```"]
    lines += [""] + [f"{t}  " for t in tail]
    return "\n".join(lines) + "\n"


STYLE = ("pre{background:#f4f4f4;padding:.8em;white-space:pre-wrap}td{padding:0 1em}.failed{color:#b00}"
         ".passed{color:#070}.skipped{color:#a60}")


def fragment(grade: Grade, png: bytes | None = None, picture: Outcome | None = None, scope: str = "") -> str:
    """The page's content without the page (a notebook shows it inline); `scope` limits its style to an element
    of that class, so that it restyles nothing else of the page it lands in."""
    head, failed, tail = _sections(grade)
    e = html.escape
    rows = "".join(
        f"<tr><td><code>{e(o.id)}</code></td><td>{points(o.points)}/{points(o.max_points)}</td>"
        f"<td class='{e(o.status)}'>{STATUS.get(o.status, o.status)}</td></tr>"
        for o in grade.outcomes
    )
    image = ""
    if png is not None:
        data = base64.b64encode(png).decode("ascii")
        named = f" ({e(picture.id)})" if picture is not None else ""
        image = (f"<h2>The smallest failing case{named}</h2>"
                 f"<img alt='your weights beside the reference&#39;s' src='data:image/png;base64,{data}'>")
    details = "".join(f"<h2><code>{e(o.id)}</code>: {e(o.title)}</h2><pre>{e(text)}</pre>" for o, text in failed)
    body = (f"<h1>{e(_title(grade))}</h1>{''.join(f'<p>{e(h)}</p>' for h in head)}<table>{rows}</table>{image}{details}"
            f"{''.join(f'<p>{e(t)}</p>' for t in tail)}")
    if not scope:
        return body
    style = "".join(f".{scope} {rule}}}" for rule in STYLE.split("}") if rule)
    return f"<div class='{scope}'><style>{style}</style>{body}</div>"


def to_html(grade: Grade, png: bytes | None = None, picture: Outcome | None = None) -> str:
    title = html.escape(_title(grade))
    style = "body{font-family:sans-serif;max-width:60em;margin:2em auto}" + STYLE
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title><style>{style}</style></head><body>"
        f"{fragment(grade, png, picture)}</body></html>\n"
    )


def rendered(grade: Grade) -> tuple[bytes | None, Outcome | None]:
    """The heatmap of the smallest failing case and its outcome, (None, None) when nothing is pictured."""
    picture = pictured(grade)
    return (heatmap(picture, grade.exercise) if picture is not None else None), picture


def write(grade: Grade, folder: str | Path) -> list[Path]:
    """feedback.md and feedback.html in `folder`, and heatmap.png (which the HTML embeds) when a case is pictured."""
    folder = Path(folder)
    md, page = folder / "feedback.md", folder / "feedback.html"
    png, picture = rendered(grade)
    written = [md, page]
    if png is not None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / PICTURE).write_bytes(png)
        written.append(folder / PICTURE)
    else:
        (folder / PICTURE).unlink(missing_ok=True)  # a picture from an earlier run would no longer fit
    write_atomic(md, markdown(grade, picture))
    write_atomic(page, to_html(grade, png, picture))
    return written
