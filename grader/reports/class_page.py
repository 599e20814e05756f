"""class.html: the class on one self-contained page. The gradebook (click a heading to sort), the score histogram,
each check's failure rate, the diagnosed mistakes, the similar pairs with their shared regions side by side, the
code traced to a source and the behaviour twins. Similar code is worded as a reason to look ("similar: review"),
never as a verdict. Deterministic: sorted, no dates, no scripts or styles from elsewhere."""

from __future__ import annotations

import html
from pathlib import Path

from grader.grading.outcome import Grade
from grader.insight.findings import Findings
from grader.insight.similarity import Pair, Span
from grader.insight.texts import Text
from grader.reports import summary
from grader.reports.files import write_atomic
from grader.reports.text import points

PAGE = "class.html"
SHOWN_PAIRS = 50  # pairs whose regions the page shows; similarity.csv lists them all
REVIEW = "similar: review"

STYLE = """
body{font-family:sans-serif;margin:2em auto;max-width:80em;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{padding:.15em .6em;text-align:left;border-bottom:1px solid #ddd}
th{background:#f0f0f0}table.sortable th{cursor:pointer}table.sortable th::after{content:" \\2195";color:#999}
td.num{text-align:right}.bar{background:#4c72b0;height:.8em;display:inline-block}
.side{display:flex;gap:1em}.side>div{flex:1;min-width:0}
pre{background:#f6f6f6;padding:.5em;overflow-x:auto;margin:.2em 0}.note{color:#555}
details{margin:.4em 0}summary{cursor:pointer}.wide{overflow-x:auto}
"""
SORT = """
document.querySelectorAll("table.sortable th").forEach(function (th, col) {
  th.addEventListener("click", function () {
    var body = th.closest("table").tBodies[0], rows = Array.prototype.slice.call(body.rows);
    var up = th.getAttribute("data-dir") !== "up";
    rows.sort(function (x, y) {
      var a = x.cells[col].textContent, b = y.cells[col].textContent, n = parseFloat(a) - parseFloat(b);
      var d = isNaN(n) ? a.localeCompare(b) : n;
      return up ? d : -d;
    });
    th.setAttribute("data-dir", up ? "up" : "down");
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
"""

e = html.escape


def page(grades: list[Grade], check_ids: list[str], found: Findings) -> str:
    if not grades:
        body = "<h1>Class report</h1><p>No submissions.</p>"
    else:
        title = f"Class report: {grades[0].rubric}, {len(grades)} submissions"
        body = (f"<h1>{e(title)}</h1>" + _gradebook(grades, check_ids, found) + _histogram(grades) + _checks(grades)
                + _mistakes(grades) + _similar(found) + _provenance(found) + _twins(found))
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>Class report</title>"
            f"<style>{STYLE}</style></head><body>{body}<script>{SORT}</script></body></html>\n")


def write(out: Path, grades: list[Grade], check_ids: list[str], found: Findings) -> None:
    write_atomic(out / PAGE, page(grades, check_ids, found))


def _table(headers: list[str], rows: list[list[str]], sortable: bool = False, id_: str = "") -> str:
    """rows hold HTML already escaped; a cell that reads as a number is right-aligned."""
    head = "".join(f"<th>{e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td class='num'>{c}</td>" if _number(c) else f"<td>{c}</td>" for c in r)
                   + "</tr>" for r in rows)
    attrs = (f" id='{id_}'" if id_ else "") + (" class='sortable'" if sortable else "")
    return f"<table{attrs}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _number(cell: str) -> bool:
    try:
        float(cell)
        return True
    except ValueError:
        return False


def _gradebook(grades: list[Grade], check_ids: list[str], found: Findings) -> str:
    flags: dict[str, list[str]] = {}
    for n, p in enumerate(found.pairs[:SHOWN_PAIRS], 1):
        for me, other in ((p.a, p.b), (p.b, p.a)):
            flags.setdefault(me, []).append(f"<a href='#pair-{n}'>similar to {e(other)}</a>")
    for t in found.traces:
        flags.setdefault(t.submission, []).append("<a href='#provenance'>traced</a>")
    for n, group in enumerate(found.twins, 1):
        for m in group.members:
            flags.setdefault(m, []).append(f"<a href='#twins'>twin {n}</a>")
    rows = []
    for g in grades:
        pts = {o.id: o.points for o in g.outcomes}
        rows.append([e(g.submission), points(g.score), ", ".join(flags.get(g.submission, [])),
                     *(points(pts.get(c, 0)) for c in check_ids), e(g.problems())])
    return ("<h2>Gradebook</h2><p class='note'>Click a heading to sort.</p><div class='wide'>"
            + _table(["submission", "total", "review", *check_ids, "errors"], rows, sortable=True, id_="gradebook")
            + "</div>")


def _histogram(grades: list[Grade]) -> str:
    """The score distribution as an inline SVG: ten bins of the maximum, as summary.md counts them."""
    counts = summary.bins(grades)
    top = max(c for _, c in counts) or 1
    width, height, bar = 640, 220, 60
    parts = []
    for i, (label, count) in enumerate(counts):
        h = round(160 * count / top)
        x = 10 + i * (bar + 3)
        parts.append(f"<rect x='{x}' y='{180 - h}' width='{bar}' height='{h}' fill='#4c72b0'><title>{e(label)}: "
                     f"{count}</title></rect><text x='{x + bar // 2}' y='{175 - h}' text-anchor='middle' "
                     f"font-size='12'>{count}</text><text x='{x + bar // 2}' y='196' text-anchor='middle' "
                     f"font-size='10'>{e(label)}</text>")
    caption = f"score (out of {points(max(g.max_score for g in grades))})"
    return (f"<h2>Score distribution</h2><svg id='histogram' xmlns='http://www.w3.org/2000/svg' width='{width}' "
            f"height='{height}' role='img' aria-label='score histogram'>{''.join(parts)}<text x='{width // 2}' "
            f"y='214' text-anchor='middle' font-size='12'>{caption}</text></svg>")


def _checks(grades: list[Grade]) -> str:
    failed = summary.failures(grades)
    ids = list(dict.fromkeys(o.id for g in grades for o in g.outcomes))
    rows = [[f"<code>{e(c)}</code>", str(failed.get(c, 0)), f"{100 * failed.get(c, 0) / len(grades):.0f}",
             f"<span class='bar' style='width:{round(200 * failed.get(c, 0) / len(grades))}px'></span>"]
            for c in sorted(ids, key=lambda c: (-failed.get(c, 0), ids.index(c)))]
    return "<h2>Failure rate per check</h2>" + _table(["check", "failed by", "% of the class", ""], rows, id_="checks")


def _mistakes(grades: list[Grade]) -> str:
    known, unknown = summary.mistakes(grades)
    rows = [[e(m), str(n)] for m, n in sorted(known.items(), key=lambda kv: (-kv[1], kv[0]))]
    text = _table(["mistake", "submissions"], rows, id_="mistakes") if rows else "<p id='mistakes'>None diagnosed.</p>"
    if unknown:
        text += f"<p>Failing in a way no known mistake explains (unrecognised): {unknown}.</p>"
    return "<h2>Diagnosed mistakes</h2>" + text


def _similar(found: Findings) -> str:
    head = (f"<h2 id='similar'>Similar pairs: review</h2><p class='note'>{REVIEW}: shared code is a reason to look, "
            "not a verdict. The starter, imports, comments, names and the lines every solution has do not count; "
            "score: the share of the smaller one's fingerprints the other has.</p>")
    if not found.pairs:
        return head + "<p>None above the threshold.</p>"
    rows = [[f"<a href='#pair-{n}'>{e(p.a)}</a>", e(p.b), f"{p.score:.2f}", str(p.shared_lines)]
            for n, p in enumerate(found.pairs, 1)]
    shown = "".join(_pair(n, p, found.texts) for n, p in enumerate(found.pairs[:SHOWN_PAIRS], 1))
    return head + _table(["a", "b", "score", "shared lines"], rows, sortable=True) + shown


def _pair(n: int, p: Pair, texts: dict[str, Text]) -> str:
    regions = "".join(
        "<div class='side'>" + _code(texts[p.a], r.a) + _code(texts[p.b], r.b) + "</div>" for r in p.regions)
    return (f"<details id='pair-{n}' open><summary>{e(p.a)} and {e(p.b)}: {p.score:.2f}, {REVIEW}</summary>"
            f"{regions}</details>")


def _code(text: Text, spans: tuple[Span, ...]) -> str:
    blocks = []
    for s in spans:
        label = text.parts[s.part][0]
        where = f"{text.name}{' ' + label if label else ''}, lines {s.first}-{s.last}"
        lines = text.lines(s.part)[s.first - 1:s.last]
        numbered = "\n".join(f"{s.first + i:4}  {line}" for i, line in enumerate(lines))
        blocks.append(f"<div><b>{e(where)}</b><pre>{e(numbered)}</pre></div>")
    return "<div>" + "".join(blocks) + "</div>"


def _provenance(found: Findings) -> str:
    head = ("<h2 id='provenance'>Code traced to a source: review</h2><p class='note'>The share of a submission's "
            "code that lies in long runs found in a public implementation (fingerprints only) or in a folder given "
            "with --compare-with.</p>")
    if not found.traces:
        return head + "<p>None above the threshold.</p>"
    link = lambda s: f"<a href='{e(s.url)}'>{e(s.name)}</a>" if s.url else e(s.name)  # noqa: E731
    rows = [[e(t.submission), link(t.source) + "".join(f" or {e(n)}" for n in t.tied), e(t.source.what), f"{t.score:.2f}"]
            for t in found.traces]
    return head + _table(["submission", "source", "code", "score"], rows, sortable=True)


def _twins(found: Findings) -> str:
    head = ("<h2 id='twins'>Behaviour twins</h2><p class='note'>The same wrong answers on the diagnosis probes, "
            "however differently written: a shared bug (and a reason to look). Correct submissions are never twins."
            "</p>")
    if not found.twins:
        return head + "<p>None.</p>"
    rows = [[str(n), e(", ".join(t.members)), e(t.mistake)] for n, t in enumerate(found.twins, 1)]
    return head + _table(["group", "submissions", "mistake"], rows)
