"""The class at a glance: score distribution (text and PNG), most-failed checks, most common diagnosed mistakes,
the submissions that could not be graded in full, and what to review first of the class insight (the similar
pairs, code traced to a source, behaviour twins). Deterministic: sorted, no dates."""

from __future__ import annotations

import io
import statistics
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from grader.grading.diagnosis import UNRECOGNISED
from grader.grading.outcome import Grade, Status
from grader.insight.findings import Findings
from grader.reports.files import write_atomic
from grader.reports.text import points

BINS = 10
PNG = "histogram.png"


def bins(grades: list[Grade]) -> list[tuple[str, int]]:
    """Ten equal bins of the maximum score; the last one includes the maximum."""
    top = max(g.max_score for g in grades)
    counts = [0] * BINS
    for g in grades:
        counts[min(int(g.score / top * BINS), BINS - 1)] += 1
    edges = [top * i / BINS for i in range(BINS + 1)]
    return [(f"[{points(edges[i])}, {points(edges[i + 1])}" + ("]" if i == BINS - 1 else ")"), counts[i]) for i in range(BINS)]


def markdown(grades: list[Grade], png: str | None = None, found: Findings | None = None) -> str:
    if not grades:
        return "# Class summary\n\nNo submissions.\n"
    scores = [g.score for g in grades]
    top = max(g.max_score for g in grades)
    lines = [
        "# Class summary",
        "",
        (f"{len(grades)} submissions, rubric {grades[0].rubric}, out of {points(top)}: "
         f"mean {statistics.mean(scores):.1f}, median {points(statistics.median(scores))}, "
         f"min {points(min(scores))}, max {points(max(scores))}, full marks {sum(s == top for s in scores)}."),
        "",
        "## Score distribution",
        "",
        "```",
    ]
    width = max(c for _, c in bins(grades))
    lines += [f"{label:<10} {count:>4} {'#' * round(40 * count / width)}" for label, count in bins(grades)]
    lines += ["```", ""]
    if png:
        lines += [f"![score histogram]({png})", ""]

    lines += ["## Most-failed checks", ""]
    failed = [(f"`{c}`", f"{n}/{len(grades)}") for c, n in _top(failures(grades))]
    lines += _table(["check", "failed by"], failed) or ["None."]

    known, unknown = mistakes(grades)
    lines += ["", "## Most common diagnosed mistakes", ""]
    lines += _table(["mistake", "submissions"], [(m, str(n)) for m, n in _top(known)]) or ["None diagnosed."]
    if unknown:
        lines += ["", f"Failing in a way no known mistake explains (unrecognised): {unknown}."]

    trouble = [(g.submission, g.problems()) for g in grades if g.problems()]
    lines += ["", "## Errored or timed out", ""]
    lines += _table(["submission", "problem"], [(f"`{s}`", p.replace("|", "\\|")) for s, p in trouble]) or ["None."]
    if found is not None:
        lines += ["", *_insight(found)]
    return "\n".join(lines) + "\n"


def _insight(found: Findings) -> list[str]:
    """The class insight in a few lines: what to review first (class.html shows it all)."""
    pairs = [(f"`{p.a}`", f"`{p.b}`", f"{p.score:.2f}") for p in found.pairs[:5]]
    lines = ["## Similar: review", ""] + (_table(["a", "b", "score"], pairs) or ["No similar pairs."])
    if len(found.pairs) > 5:
        lines += ["", f"... and {len(found.pairs) - 5} more in similarity.csv."]
    traced = [(f"`{t.submission}`", t.named, f"{t.score:.2f}") for t in found.traces]
    lines += [""] + (_table(["submission", "traced to", "score"], traced) or ["No code traced to a known source."])
    groups = "; ".join(", ".join(f"`{m}`" for m in t.members) for t in found.twins)
    lines += ["", f"Behaviour twins (the same wrong answers): {len(found.twins)} groups" + (f": {groups}" if groups else ".")]
    if found.unread:
        unread = ", ".join(f"`{name}` ({why})" for name, why in sorted(found.unread.items()))
        lines += ["", f"Not compared (no fingerprint): {unread}."]
    return lines


def failures(grades: list[Grade]) -> Counter:
    """check id -> how many submissions failed it."""
    return Counter(o.id for g in grades for o in g.outcomes if o.status is Status.FAILED)


def mistakes(grades: list[Grade]) -> tuple[Counter, int]:
    """(mistake -> how many submissions make it, how many no known mistake explains): "unrecognised" is not a
    mistake of its own, only the absence of a known one."""
    known = Counter(d for g in grades for d in g.diagnosis if d != UNRECOGNISED)
    return known, sum(UNRECOGNISED in g.diagnosis for g in grades)


def _top(counter: Counter, n: int = 10) -> list[tuple[str, int]]:
    return sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


def _table(headers: list[str], rows: Sequence[tuple[str, ...]]) -> list[str]:
    if not rows:
        return []
    return [f"| {' | '.join(headers)} |", "|" + "---|" * len(headers)] + [f"| {' | '.join(r)} |" for r in rows]


def histogram_png(grades: list[Grade]) -> bytes | None:
    """The score histogram as PNG bytes, or None without matplotlib (an optional extra: `.[plots]`)."""
    try:
        fig = histogram_figure(grades)
    except ImportError:
        return None
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})  # no version stamp: same grades, same bytes
    plt.close(fig)
    return buf.getvalue()


def histogram_figure(grades: list[Grade]):
    """The histogram's matplotlib figure, laid out so that every label lies inside it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    top = max(g.max_score for g in grades)
    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=100)
    ax.hist([g.score for g in grades], bins=BINS, range=(0, top), color="#4c72b0", edgecolor="white")
    ax.set_xlabel(f"score (out of {points(top)})")
    ax.set_ylabel("submissions")
    ax.set_title(f"{grades[0].rubric}: {len(grades)} submissions")
    fig.tight_layout()  # the x-axis label inside the picture, not cut off at its bottom edge
    return fig


def write(out: Path, grades: list[Grade], found: Findings | None = None) -> str:
    """summary.md and histogram.png in `out`; returns the Markdown."""
    png = histogram_png(grades) if grades else None
    if png is not None:
        tmp = out / f".{PNG}.tmp"
        tmp.write_bytes(png)
        tmp.replace(out / PNG)
    text = markdown(grades, PNG if png is not None else None, found)
    write_atomic(out / "summary.md", text)
    return text
