"""Batch grading speed and memory: `attention-grader grade` on a folder of >= 60 submissions (copies of the
samples under distinct names) against `python -c "import torch"` timed in the same run.

Targets (issue 4, on 2 cores): wall time per submission <= 0.5 x one torch import; peak memory of the whole
process tree (the batch process, its grader processes, their fork servers and workers) <= 1.5 GiB.
Memory is sampled from /proc every 50 ms: the sum of PSS (shared pages split between the processes that share
them: what the tree really costs) and, as an upper bound, the sum of RSS (shared pages counted once per process).
The wall time comes from a run of its own: the sampling takes about a third of a core beside the batch.

    python benchmarks/bench_batch.py [--n 60] [--workers N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "submissions" / "chapter5"
GiB = 1 << 30


def build(folder: Path, n: int) -> int:
    """n submissions: the samples (correct, buggy, vacuous; files, folders, notebooks) cycled under new names."""
    samples = sorted(p for p in SAMPLES.iterdir() if not p.name.startswith((".", "_", "README")))
    for i in range(n):
        src = samples[i % len(samples)]
        dest = folder / f"s{i:03d}_{src.name}"
        shutil.copytree(src, dest) if src.is_dir() else shutil.copy(src, dest)
    return n


def torch_import() -> float:
    runs = []
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import torch"], check=True)
        runs.append(time.perf_counter() - t)
    return statistics.median(runs)


def _tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def _kib(path: str, field: str) -> int:
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _cpu(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat") as f:
            utime, stime = f.read().rsplit(")", 1)[1].split()[11:13]
        return (int(utime) + int(stime)) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError):
        return 0.0


class Memory(threading.Thread):
    """Peak sum of PSS and of RSS over a process tree, and the CPU time it used, sampled until `done`."""

    def __init__(self, root: int):
        super().__init__(daemon=True)
        self.root, self.pss, self.rss, self.procs = root, 0, 0, 0
        self.cpus: dict[int, float] = {}  # pid -> CPU seconds last seen (a process gone between samples loses < 50 ms)
        self.done = threading.Event()

    @property
    def cpu(self) -> float:
        return sum(self.cpus.values())

    def run(self) -> None:
        while not self.done.wait(0.05):
            pids = _tree(self.root)
            for p in pids:
                self.cpus[p] = max(self.cpus.get(p, 0.0), _cpu(p))
            self.pss = max(self.pss, sum(_kib(f"/proc/{p}/smaps_rollup", "Pss:") for p in pids) * 1024)
            self.rss = max(self.rss, sum(_kib(f"/proc/{p}/status", "VmRSS:") for p in pids) * 1024)
            self.procs = max(self.procs, len(pids))


def grade(folder: Path, out: Path, workers: int | None, sampled: bool = False) -> tuple[float, Memory | None]:
    """(wall time, the tree's memory and CPU where `sampled`: then every submission is graded again, --force)."""
    cmd = [sys.executable, "-m", "grader.frontends.cli", "grade", str(folder), "--rubric", "chapter5", "--out", str(out)]
    cmd += ["--workers", str(workers)] if workers else []
    cmd += ["--force"] if sampled else []
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    mem = Memory(proc.pid) if sampled else None
    if mem:
        mem.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - t
    if mem:
        mem.done.set()
        mem.join()
    if proc.returncode != 0:
        sys.exit(f"bench_batch: the batch run failed ({proc.returncode}):\n{err}")
    return wall, mem


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=60, help="submissions in the folder (default 60)")
    ap.add_argument("--workers", type=int, help="grader processes (default: the batch command's, the CPU count)")
    args = ap.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        folder, out = Path(tmp) / "class", Path(tmp) / "grades"
        folder.mkdir()
        n = build(folder, args.n)
        imp = torch_import()
        wall, _ = grade(folder, out, args.workers)
        again, _ = grade(folder, out, args.workers)
        _, mem = grade(folder, out, args.workers, sampled=True)
        assert mem is not None
        imp_after = torch_import()
    imp = statistics.median([imp, imp_after])  # other load on the machine moves both
    per = wall / n
    workers = args.workers or os.cpu_count()
    print(f"{n} submissions, {workers} grader processes, {os.cpu_count()} CPUs; "
          f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after (other users' processes share the CPUs)")
    print(f"python -c 'import torch':       {imp:.2f} s (median of 6 runs around the batch)")
    print(f"batch wall time:                 {wall:.1f} s = {per:.2f} s per submission = {per / imp:.2f} x torch import"
          f"  (target <= 0.5) {'OK' if per / imp <= 0.5 else 'OVER'}")
    print(f"peak memory of the process tree: PSS {mem.pss / GiB:.2f} GiB (target <= 1.5) "
          f"{'OK' if mem.pss <= 1.5 * GiB else 'OVER'}; RSS summed over processes {mem.rss / GiB:.2f} GiB; "
          f"up to {mem.procs} processes")
    print(f"CPU time of the process tree:    {mem.cpu:.1f} s = {mem.cpu / n:.2f} s per submission; with the CPUs to "
          f"itself: ~{mem.cpu / min(workers, os.cpu_count()) / n:.2f} s per submission = "
          f"{mem.cpu / min(workers, os.cpu_count()) / n / imp:.2f} x torch import")
    print(f"unchanged re-run:                {again:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
