"""How long a student waits: `attention-grader check` and `pytest --submission` on a correct file, against a bare
`python -c "import torch"` measured in the same run (the runs interleave, so they share the machine's load).

    python benchmarks/bench_check.py [--repeat 7] [--submission FILE]

Prints the median of each and the ratios; the target for `check` is at most 2.5 times `import torch`.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
TARGET = 2.5


def seconds(argv: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    took = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"bench_check: {' '.join(argv)} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return took


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--submission", default=str(ROOT / "submissions" / "chapter5" / "correct_basic.py"))
    args = p.parse_args()
    commands = {
        "import torch": [sys.executable, "-c", "import torch"],
        "attention-grader check": [str(BIN / "attention-grader"), "check", args.submission],
        "pytest --submission": [str(BIN / "pytest"), "-q", "-p", "no:cacheprovider", "--submission", args.submission],
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.repeat):
        for name, argv in commands.items():
            times[name].append(seconds(argv))
    base = statistics.median(times["import torch"])
    print(f"median of {args.repeat} runs each, interleaved; submission {Path(args.submission).name}")
    for name, ts in times.items():
        ratio = statistics.median(ts) / base
        verdict = "" if name == "import torch" else f"  ratio {ratio:.2f}" + (f" (target <= {TARGET})" if "check" in name else "")
        print(f"  {name:24s} {statistics.median(ts):6.2f} s  (min {min(ts):.2f}, max {max(ts):.2f}){verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
