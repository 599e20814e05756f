"""The picture of a failing case: the submission's attention weights beside the reference's, values written in,
the region the exercise forbids hatched, so that a student sees at a glance where weight goes that should not."""

from __future__ import annotations

import io

import numpy as np
import torch

from grader.exercises import EXERCISES
from grader.grading.outcome import Grade, Outcome, Status
from grader.reports.text import reveals


def pictured(grade: Grade) -> Outcome | None:
    """The failed visible check with the smallest case on which the weights differ from the reference's (T=1 only
    when nothing larger failed: one cell shows no pattern)."""
    def differs(o: Outcome) -> bool:
        c = o.case
        return c is not None and c.weights is not None and c.expected is not None and not torch.allclose(
            c.weights.double(), c.expected.double(), rtol=1e-4, atol=1e-6, equal_nan=True)

    def size(o: Outcome) -> tuple[bool, int, int]:
        assert o.case is not None and o.case.weights is not None  # differs(o)
        w = o.case.weights
        return w.shape[-1] < 2, w.shape[-1], w.numel()

    shown = [o for o in grade.outcomes if o.status is Status.FAILED and reveals(o) and differs(o)]
    return min(shown, key=size, default=None)


def worst(case) -> tuple[int, ...]:
    """The leading index (batch, heads) of the [T, T] slice where the weights differ from the reference's most."""
    lead = tuple(case.weights.shape[:-2])
    if not lead:
        return ()
    bad = ~torch.isclose(case.weights.double(), case.expected.double(), rtol=1e-4, atol=1e-6, equal_nan=True)
    i = int(bad.reshape(-1, *bad.shape[-2:]).sum((1, 2)).argmax())
    return tuple(int(x) for x in np.unravel_index(i, lead))


def heatmap(o: Outcome, exercise: str) -> bytes:
    """PNG: the case's weights, the submission's beside the reference's, values written in, and hatched where the
    exercise forbids any weight (the future, for causal attention)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    case = o.case
    assert case is not None and case.weights is not None and case.expected is not None  # pictured(grade)
    where = worst(case)
    rows, t = case.weights.shape[-2:]  # fewer queries than keys after a KV cache's past
    ex = EXERCISES[exercise]
    forbidden = ex.forbidden(*case.args, **case.kw).expand(case.weights.shape)[where]
    width, height = max(6.5, 3 + 1.6 * t), 2.5 + 0.7 * rows
    index = f"[{', '.join(map(str, where))}]" if where else ""
    shown = [f"{n}={x[where[0]].tolist() if where and x.dim() else x.tolist()}" if hasattr(x, "tolist")
             else f"{n} of length {x[0].shape[-2]}" if isinstance(x, tuple)
             else f"{n}={x!r}" for n, x in case.kw.items()]  # causal=False, this batch element's padding_mask, a KV cache
    future = f"\nhatched: {ex.forbidden_caption}, which must get weight 0" if forbidden.any() else ""
    caption = f"{o.id}: weights{index}, T={t}{''.join(', ' + s for s in shown)}{future}"
    fig, axes = plt.subplots(1, 2, figsize=(width, height), dpi=100)
    # margins in inches, set here: a layout engine (constrained_layout) draws the whole figure once more to measure it
    top = 0.55 + 0.17 * caption.count("\n")
    fig.subplots_adjust(left=0.7 / width, right=1 - 1.05 / width, bottom=0.6 / height, top=1 - top / height,
                        wspace=0.75 / ((width - 1.75 - 0.75) / 2))
    cmap = matplotlib.colormaps["Blues"].with_extremes(bad="lightgrey")
    for ax, w, title in zip(axes, (case.weights, case.expected), ("your weights", "reference weights")):
        w = w[where].double()
        image = ax.imshow(w.clamp(0, 1).numpy(), cmap=cmap, vmin=0, vmax=1)  # NaN stays NaN: drawn grey
        for i in range(rows):
            for j in range(t):
                x = float(w[i, j])
                if forbidden[i, j]:
                    ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="//", edgecolor="red", linewidth=0))
                ax.text(j, i, f"{x:.2f}", ha="center", va="center", fontsize=9,
                        bbox=dict(boxstyle="round,pad=0.15", facecolor="white", edgecolor="none", alpha=0.8))
        ax.set_title(title)
        ax.set_xlabel("key j")
        ax.set_ylabel("query i")
        ax.set_xticks(range(t))
        ax.set_yticks(range(rows))
    axes[1].apply_aspect()  # the image's own box, within the subplot's
    box = axes[1].get_position()
    fig.colorbar(image, cax=fig.add_axes((1 - 0.75 / width, box.y0 + 0.1 * box.height, 0.15 / width, 0.8 * box.height)))
    fig.suptitle(caption, fontsize=10, y=1 - 0.08 / height, va="top")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})  # no version stamp: same grade, same bytes
    plt.close(fig)
    return buf.getvalue()
