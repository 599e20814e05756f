"""The Dask back end's cost: `attention-grader grade` on N submissions (copies of the chapter5 samples under distinct
names) with `--scheduler local:W` against the local pool's `--workers W`, on this machine.

Target (issue 35): on a 2-worker LocalCluster, <= 10 % more wall time than the local pool on 96 files. The Dask run's wall
time includes starting the cluster (scheduler, worker threads, one warm grader process per worker),
as a teacher's run would; the overhead per submission is (Dask - local) / N. Other users' processes on the
machine move both figures: the load average is printed with them, and --rounds alternates the two.

    python benchmarks/bench_dask.py [--n 200] [--workers 2] [--rounds 1]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_batch import build


def _rows(db: Path) -> int:
    try:
        with sqlite3.connect(db) as con:
            return con.execute("SELECT count(*) FROM grades").fetchone()[0]
    except sqlite3.Error:
        return 0


def grade(folder: Path, out: Path, how: list[str]) -> tuple[float, float]:
    """(wall time, time to the first committed grade: the start-up, grader processes warm)."""
    cmd = [sys.executable, "-m", "grader.frontends.cli", "grade", folder.name, "--rubric", "chapter5", "--out", out.name]
    t = time.perf_counter()
    proc = subprocess.Popen(cmd + how, cwd=folder.parent, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    first = None
    while proc.poll() is None and first is None:
        if _rows(out / "gradebook.sqlite"):
            first = time.perf_counter() - t
        time.sleep(0.1)
    _, err = proc.communicate()
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        sys.exit(f"bench_dask: {' '.join(how)} failed ({proc.returncode}):\n{err[-2000:]}")
    return wall, first if first is not None else wall


def same_files(a: Path, b: Path) -> bool:
    def files(out):
        return {p.relative_to(out): p.read_bytes() for p in out.rglob("*")
                if p.is_file() and not p.name.startswith("gradebook.sqlite")}
    return files(a) == files(b)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200, help="submissions (default 200)")
    ap.add_argument("--workers", type=int, default=2, help="grader processes / Dask worker processes (default 2)")
    ap.add_argument("--rounds", type=int, default=1, help="alternate local and Dask runs this many times (default 1)")
    args = ap.parse_args()
    load_before = os.getloadavg()[0]
    local, dask = [], []
    with tempfile.TemporaryDirectory(prefix="bench-dask-") as tmp:
        folder = Path(tmp) / "class"
        folder.mkdir()
        n = build(folder, args.n)
        for r in range(args.rounds):
            local.append(grade(folder, Path(tmp) / f"local{r}", ["--workers", str(args.workers)]))
            dask.append(grade(folder, Path(tmp) / f"dask{r}", ["--scheduler", f"local:{args.workers}"]))
        identical = same_files(Path(tmp) / "local0", Path(tmp) / "dask0")
    (lo, lo1), (da, da1) = (tuple(map(statistics.median, zip(*runs))) for runs in (local, dask))
    over = (da - lo) / lo
    print(f"{n} submissions, {args.workers} processes, {os.cpu_count()} CPUs, {args.rounds} round(s); load average "
          f"{load_before:.1f} before, {os.getloadavg()[0]:.1f} after (other users' processes share the CPUs)")
    print("| back end | wall time | per submission | start-up (first grade committed) | per submission after it |")
    print("|---|---|---|---|---|")
    for label, wall, first in ((f"local pool (`--workers {args.workers}`)", lo, lo1),
                               (f"Dask LocalCluster (`--scheduler local:{args.workers}`)", da, da1)):
        print(f"| {label} | {wall:.1f} s | {wall / n:.3f} s | {first:.1f} s | {(wall - first) / max(n - 1, 1):.3f} s |")
    print(f"| overhead | {da - lo:+.1f} s = {over:+.1%} | {(da - lo) / n:+.3f} s | {da1 - lo1:+.1f} s | "
          f"{((da - da1) - (lo - lo1)) / max(n - 1, 1):+.3f} s |")
    print(f"target <= +10 % wall time: {'OK' if over <= 0.10 else 'OVER'}; output files byte-identical: {identical}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
