"""The class insight as files for tools: similarity.csv, provenance.csv and twins.csv, sorted, without dates."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from grader.insight.findings import Findings
from grader.reports.files import write_atomic

SIMILARITY, PROVENANCE, TWINS = "similarity.csv", "provenance.csv", "twins.csv"


def _csv(header: list[str], rows) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


def similarity_csv(found: Findings) -> str:
    """Pairs at or above the threshold, by descending score: a < b by name."""
    return _csv(["a", "b", "score", "shared_lines"],
                ([p.a, p.b, f"{p.score:.2f}", p.shared_lines] for p in found.pairs))


def provenance_csv(found: Findings) -> str:
    return _csv(["submission", "source", "score"],
                ([t.submission, t.named, f"{t.score:.2f}"] for t in found.traces))


def twins_csv(found: Findings) -> str:
    """One row per member: groups numbered from 1, the largest first."""
    return _csv(["group", "submission", "mistake"],
                ([n, m, t.mistake] for n, t in enumerate(found.twins, 1) for m in t.members))


def write(out: Path, found: Findings) -> None:
    write_atomic(out / SIMILARITY, similarity_csv(found))
    write_atomic(out / PROVENANCE, provenance_csv(found))
    write_atomic(out / TWINS, twins_csv(found))
