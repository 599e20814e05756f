"""Feedback files for one graded submission: Markdown and a self-contained HTML page with the same content, and
a heatmap of the smallest failing case (the submission's attention weights beside the reference's, the future
marked) so that a student sees at a glance where weight goes that should not."""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path

import numpy as np
import torch

from grader.diagnose import explain
from grader.grading import Grade, Outcome
from grader.report import STATUS, feedback, left_out, points, reveals, write_atomic

PICTURE = "heatmap.png"


def pictured(grade: Grade) -> Outcome | None:
    """The failed visible check with the smallest case on which the weights differ from the reference's (T=1 only
    when nothing larger failed: one cell shows no pattern)."""
    def differs(o: Outcome) -> bool:
        c = o.case
        return c is not None and c.weights is not None and c.expected is not None and not torch.allclose(
            c.weights.double(), c.expected.double(), rtol=1e-4, atol=1e-6, equal_nan=True)

    shown = [o for o in grade.outcomes if o.status == "failed" and reveals(o) and differs(o)]
    return min(shown, key=lambda o: (o.case.weights.shape[-1] < 2, o.case.weights.shape[-1], o.case.weights.numel()), default=None)


def worst(case) -> tuple[int, ...]:
    """The leading index (batch, heads) of the [T, T] slice where the weights differ from the reference's most."""
    lead = tuple(case.weights.shape[:-2])
    if not lead:
        return ()
    bad = ~torch.isclose(case.weights.double(), case.expected.double(), rtol=1e-4, atol=1e-6, equal_nan=True)
    i = int(bad.reshape(-1, *bad.shape[-2:]).sum((1, 2)).argmax())
    return tuple(int(x) for x in np.unravel_index(i, lead))


def heatmap(o: Outcome) -> bytes:
    """PNG: the case's weights, the submission's beside the reference's, values written in, the future hatched."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    case = o.case
    where = worst(case)
    t = case.weights.shape[-1]
    causal = case.kw.get("causal", True)
    fig, axes = plt.subplots(1, 2, figsize=(max(6.5, 3 + 1.6 * t), 2.5 + 0.7 * t), dpi=100, constrained_layout=True)
    cmap = matplotlib.colormaps["Blues"].with_extremes(bad="lightgrey")
    for ax, w, title in zip(axes, (case.weights, case.expected), ("your weights", "reference weights")):
        w = w[where].double()
        image = ax.imshow(w.clamp(0, 1).numpy(), cmap=cmap, vmin=0, vmax=1)  # NaN stays NaN: drawn grey
        for i in range(t):
            for j in range(t):
                x = float(w[i, j])
                if causal and j > i:
                    ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="//", edgecolor="red", linewidth=0))
                ax.text(j, i, f"{x:.2f}", ha="center", va="center", fontsize=9,
                        bbox=dict(boxstyle="round,pad=0.15", facecolor="white", edgecolor="none", alpha=0.8))
        ax.set_title(title)
        ax.set_xlabel("key j")
        ax.set_ylabel("query i")
        ax.set_xticks(range(t))
        ax.set_yticks(range(t))
    fig.colorbar(image, ax=list(axes), shrink=0.8)
    index = f"[{', '.join(map(str, where))}]" if where else ""
    shown = [f"{n}={x[where[0]].tolist() if where and x.dim() else x.tolist()}" if hasattr(x, "tolist") else f"{n}={x!r}"
             for n, x in case.kw.items()]  # causal=False, or this batch element's padding_mask
    future = "\nhatched: the future (j > i), which must get weight 0" if causal else ""
    fig.suptitle(f"{o.id}: weights{index}, T={t}{''.join(', ' + s for s in shown)}{future}", fontsize=10)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})  # no version stamp: same grade, same bytes
    plt.close(fig)
    return buf.getvalue()


def _sections(grade: Grade) -> tuple[list[str], list[tuple[Outcome, str]], list[str]]:
    """What both formats say: the head lines, (failed check, its feedback) and the tail lines."""
    head = [f"Rubric: {grade.rubric}"] + [f"Likely mistake: {explain(d)}" for d in grade.diagnosis]
    failed = [(o, feedback(o)) for o in grade.outcomes if o.status == "failed" and reveals(o)]
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


def to_html(grade: Grade, png: bytes | None = None, picture: Outcome | None = None) -> str:
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
        image = (f"<h2>The smallest failing case ({e(picture.id)})</h2>"
                 f"<img alt='your weights beside the reference&#39;s' src='data:image/png;base64,{data}'>")
    details = "".join(f"<h2><code>{e(o.id)}</code>: {e(o.title)}</h2><pre>{e(text)}</pre>" for o, text in failed)
    title = e(_title(grade))
    style = ("body{font-family:sans-serif;max-width:60em;margin:2em auto}pre{background:#f4f4f4;padding:.8em;"
             "white-space:pre-wrap}td{padding:0 1em}.failed{color:#b00}.passed{color:#070}.skipped{color:#a60}")
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title><style>{style}</style></head><body>"
        f"<h1>{title}</h1>{''.join(f'<p>{e(h)}</p>' for h in head)}<table>{rows}</table>{image}{details}"
        f"{''.join(f'<p>{e(t)}</p>' for t in tail)}</body></html>\n"
    )


def write(grade: Grade, folder: str | Path) -> list[Path]:
    """feedback.md and feedback.html in `folder`, and heatmap.png (which the HTML embeds) when a case is pictured."""
    folder = Path(folder)
    md, page = folder / "feedback.md", folder / "feedback.html"
    picture = pictured(grade)
    png = heatmap(picture) if picture is not None else None
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
