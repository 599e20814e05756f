"""The class at a glance: score distribution (text and PNG), most-failed checks, most common diagnosed mistakes,
and the submissions that could not be graded in full. Deterministic: sorted, no dates."""

from __future__ import annotations

import io
import statistics
from collections import Counter
from pathlib import Path

from grader.grading.outcome import Grade, Status
from grader.reports.files import write_atomic
from grader.reports.text import points

BINS = 10
PNG = "histogram.png"


def _bins(grades: list[Grade]) -> list[tuple[str, int]]:
    """Ten equal bins of the maximum score; the last one includes the maximum."""
    top = max(g.max_score for g in grades)
    counts = [0] * BINS
    for g in grades:
        counts[min(int(g.score / top * BINS), BINS - 1)] += 1
    edges = [top * i / BINS for i in range(BINS + 1)]
    return [(f"[{points(edges[i])}, {points(edges[i + 1])}" + ("]" if i == BINS - 1 else ")"), counts[i]) for i in range(BINS)]


def markdown(grades: list[Grade], png: str | None = None) -> str:
    if not grades:
        return "# Class summary\n\nNo submissions.\n"
    scores = [g.score for g in grades]
    top = max(g.max_score for g in grades)
    lines = [
        "# Class summary",
        "",
        f"{len(grades)} submissions, rubric {grades[0].rubric}, out of {points(top)}: "
        f"mean {statistics.mean(scores):.1f}, median {points(statistics.median(scores))}, "
        f"min {points(min(scores))}, max {points(max(scores))}, full marks {sum(s == top for s in scores)}.",
        "",
        "## Score distribution",
        "",
        "```",
    ]
    width = max(c for _, c in _bins(grades))
    lines += [f"{label:<10} {count:>4} {'#' * round(40 * count / width)}" for label, count in _bins(grades)]
    lines += ["```", ""]
    if png:
        lines += [f"![score histogram]({png})", ""]

    failed = Counter(o.id for g in grades for o in g.outcomes if o.status is Status.FAILED)
    lines += ["## Most-failed checks", ""]
    lines += _table(["check", "failed by"], [(f"`{c}`", f"{n}/{len(grades)}") for c, n in _top(failed)]) or ["None."]

    mistakes = Counter(d for g in grades for d in g.diagnosis)
    lines += ["", "## Most common diagnosed mistakes", ""]
    lines += _table(["mistake", "submissions"], [(m, str(n)) for m, n in _top(mistakes)]) or ["None diagnosed."]

    trouble = [(g.submission, g.problems()) for g in grades if g.problems()]
    lines += ["", "## Errored or timed out", ""]
    lines += _table(["submission", "problem"], [(f"`{s}`", p.replace("|", "\\|")) for s, p in trouble]) or ["None."]
    return "\n".join(lines) + "\n"


def _top(counter: Counter, n: int = 10) -> list[tuple[str, int]]:
    return sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


def _table(headers: list[str], rows: list[tuple[str, str]]) -> list[str]:
    if not rows:
        return []
    return [f"| {' | '.join(headers)} |", "|" + "---|" * len(headers)] + [f"| {' | '.join(r)} |" for r in rows]


def histogram_png(grades: list[Grade]) -> bytes | None:
    """The score histogram as PNG bytes, or None without matplotlib (an optional extra: `.[plots]`)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    top = max(g.max_score for g in grades)
    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=100)
    ax.hist([g.score for g in grades], bins=BINS, range=(0, top), color="#4c72b0", edgecolor="white")
    ax.set_xlabel(f"score (out of {points(top)})")
    ax.set_ylabel("submissions")
    ax.set_title(f"{grades[0].rubric}: {len(grades)} submissions")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})  # no version stamp: same grades, same bytes
    plt.close(fig)
    return buf.getvalue()


def write(out: Path, grades: list[Grade]) -> str:
    """summary.md and histogram.png in `out`; returns the Markdown."""
    png = histogram_png(grades) if grades else None
    if png is not None:
        tmp = out / f".{PNG}.tmp"
        tmp.write_bytes(png)
        tmp.replace(out / PNG)
    text = markdown(grades, PNG if png is not None else None)
    write_atomic(out / "summary.md", text)
    return text
