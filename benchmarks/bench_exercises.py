"""Each bundled exercise's cost per submission against chapter 5's (issue 35: the new exercises within 1.2x).

One warm process grades every rubric's `correct_*`/`public_*` samples (code that passes) and `bug_*` samples (code
that fails), without a process's start, which a batch pays once; each rubric's plan is recorded or read first,
untimed. A rubric's cost per submission is that of a class where half the code has a bug: the mean of its passing
samples' mean wall time and its bug samples' mean, so that a folder holding more bugs than another does not weigh
on the figure. The samples of all rubrics are graded in turn, one of each rubric after another, so that the
machine's drift over the minutes the run takes falls on every rubric alike; --rounds repeats the whole, and each
rubric's figure is the median over rounds, divided by chapter 5's.

    python benchmarks/bench_exercises.py [--rounds 1] [--json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASE = "chapter5"
KINDS = {"passes": ("correct_", "public_"), "fails": ("bug_",)}


def samples(rubric: str) -> list[tuple[str, Path]]:
    return [(kind, p) for kind, prefixes in KINDS.items() for p in sorted((ROOT / "submissions" / rubric).iterdir())
            if p.name.startswith(prefixes)]


def measure(rounds: int) -> dict[str, dict[str, float]]:
    """rubric -> {kind: median over rounds of the mean seconds per submission of that kind, "cost": their mean,
    "parts": the exercises it grades}."""
    from grader.grading.engine import Grading
    from grader.grading.rubric import load
    from grader.sandbox import spawn

    spawn.warm_up(meta=True)  # as the batch's grader processes do
    rubrics = sorted(p.stem for p in (ROOT / "rubrics").glob("*.toml") if (ROOT / "submissions" / p.stem).is_dir())
    loaded = {r: load(r) for r in rubrics}
    for r in rubrics:
        Grading(samples(r)[0][1], loaded[r]).finish()  # the plan, recorded once or read from the user's cache
    turns = [(r, kind, path) for group in itertools.zip_longest(*(samples(r) for r in rubrics))
             for r, item in zip(rubrics, group) if item for kind, path in [item]]
    means: dict = {r: {kind: [] for kind in KINDS} for r in rubrics}
    for _ in range(rounds):
        took: dict = {r: {kind: [] for kind in KINDS} for r in rubrics}
        for r, kind, path in turns:
            start = time.perf_counter()
            Grading(path, loaded[r]).finish()
            took[r][kind].append(time.perf_counter() - start)
        for r in rubrics:
            for kind in KINDS:
                means[r][kind].append(statistics.mean(took[r][kind]))
    found = {r: {kind: statistics.median(m) for kind, m in means[r].items()} for r in rubrics}
    for r in rubrics:
        found[r]["cost"] = statistics.mean(found[r][kind] for kind in KINDS)
        found[r]["parts"] = len(loaded[r].parts) or 1  # a rubric in parts grades each part, an exercise, on its own
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--json", action="store_true", help="the figures as JSON, for bench.py")
    args = ap.parse_args()
    found = measure(args.rounds)
    if args.json:
        print(json.dumps(found))
        return 0
    print(f"{args.rounds} round(s); wall time per submission in one warm process\n")
    print("| rubric | passing code | code with a bug | half and half | / chapter 5's |\n|---|---|---|---|---|")
    for r, f in found.items():
        print(f"| {r} | {f['passes']:.2f} s | {f['fails']:.2f} s | {f['cost']:.2f} s | {f['cost'] / found[BASE]['cost']:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
