"""Which walls this machine raises around every worker (the worker raises them: sandbox.worker.walls), and the
report's lines that say so.

Which walls go up is found once per process by the worker's walls probe, run in a throwaway process that tries each
for real. A wall this machine should raise (as root: all of them; as a normal user: what its kernel offers
unprivileged) that does not go up stops grading with `WallsDown`, one line, unless the teacher set
ATTENTION_GRADER_ALLOW_WEAK_WALLS=1, and then the report's first line says "WEAK WALLS". Never a quiet downgrade.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import os
import subprocess
import sys

from grader.sandbox import fs_view, uids

WALLS = ("net", "mounts", "uid", "pids", "landlock", "seccomp")
WEAK_ENV = "ATTENTION_GRADER_ALLOW_WEAK_WALLS"
PROBE_TRIES = 3


class WallsDown(Exception):
    """A wall this machine supports could not go up: grading stops (one line, exit status 2)."""


def privileged() -> bool:
    return os.geteuid() == 0


def expected() -> dict:
    """wall -> None where this machine should raise it, else why it cannot (the report says so)."""
    found = dict.fromkeys(WALLS)
    if os.uname().machine not in ("x86_64", "aarch64"):
        found["seccomp"] = f"no seccomp filter written for {os.uname().machine}"
    if privileged():
        return found
    found["uid"] = "not running as root"
    for path, bad in (("/proc/sys/user/max_user_namespaces", "0"), ("/proc/sys/kernel/unprivileged_userns_clone", "0"),
                      ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1")):
        try:
            with open(path) as f:
                if f.read().strip() == bad:
                    for w in ("net", "mounts", "pids"):
                        found[w] = f"user namespaces are disabled ({path} is {bad})"
        except OSError:
            pass
    return found


def _probe_args() -> dict:
    return {"view": fs_view.view_plan(), "uid": uids.PROBE_UID, "readable": fs_view.python_paths()}


def _probe_start(args: dict) -> tuple:
    cmd = [sys.executable, "-m", "grader.sandbox.worker.walls", json.dumps(args)]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True), args


# The probe start_probe started, by the pid of the process that started it: a process forked meanwhile (the fork
# server, a batch's grader) neither reads nor ends it.
_early: dict[int, tuple] = {}


def start_probe() -> None:
    """Start the walls probe now, so that it runs on another core while this process imports torch: walls() then
    reads its answer instead of waiting for one. Only after spawn.hold(): the probe gets this process's environment."""
    if os.getpid() in _early or walls.cache_info().currsize:
        return
    if not _early:
        atexit.register(_drop_early)
    _early[os.getpid()] = _probe_start(_probe_args())


def _drop_early() -> None:
    """At exit, a probe that no walls() read (a bad rubric ended the command first): waited for, not left running
    (it removes its own folder as it ends)."""
    if (started := _early.pop(os.getpid(), None)) is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            _answer(started[0], timeout=10)


def _answer(proc: subprocess.Popen, timeout: float) -> tuple[str, str]:
    """The probe's stdout and stderr once it ends; killed, and TimeoutExpired, when it has not ended by `timeout`."""
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise


def _probe_once(args: dict) -> dict:
    started = _early.pop(os.getpid(), None)
    out, err = _answer(started[0] if started is not None and started[1] == args else _probe_start(args)[0], timeout=120)
    found = json.loads(out.strip().splitlines()[-1])
    if not isinstance(found, dict) or not set(WALLS) <= set(found):
        raise ValueError(f"the walls probe said {out[-200:]!r} {err[-300:]!r}")
    return {k: v if isinstance(v := found[k], (str, type(None))) else "unknown" for k in WALLS}


@functools.cache
def walls() -> dict:
    """wall -> None where it goes up around every worker, else why not. Raises WallsDown when one this machine
    should raise does not (a failed probe is retried first), unless weak walls were allowed (`weak()`)."""
    want = expected()
    args = _probe_args()
    error = ""
    for _ in range(PROBE_TRIES):
        try:
            found = _probe_once(args)
            break
        except (OSError, subprocess.SubprocessError, ValueError, IndexError) as e:
            error = str(e) or type(e).__name__
    else:
        found = dict.fromkeys(WALLS, f"the walls probe failed ({error[:200]})")
    found = {w: want[w] or found[w] for w in WALLS}
    down = {w: found[w] for w in WALLS if want[w] is None and found[w] is not None}
    if down and os.environ.get(WEAK_ENV) != "1":
        first = next(iter(down))
        raise WallsDown(f"the sandbox's {', '.join(down)} wall{'s' if len(down) > 1 else ''} could not go up "
                        f"({down[first]}); grading stopped. Set {WEAK_ENV}=1 to grade without "
                        f"{'them' if len(down) > 1 else 'it'} (the report will say WEAK WALLS)")
    return found


def weak() -> list[str]:
    """The walls this machine should raise that are down (graded anyway: ATTENTION_GRADER_ALLOW_WEAK_WALLS=1)."""
    want, up = expected(), walls()
    return [w for w in WALLS if want[w] is None and up.get(w, "unknown") is not None]


def uid_wall() -> str | None:
    """None when workers can run under their own uid, else why not (the report says so)."""
    return walls()["uid"]


def worker_walls(uid: int | None) -> dict:
    """The part of a worker's limits that says which walls it raises, and how."""
    up = {w: walls().get(w, "unknown") is None for w in WALLS}
    return {"net": up["net"], "view": fs_view.view_plan() if up["mounts"] else None, "uid": uid, "pids": up["pids"],
            "userns": not privileged() and (up["net"] or up["mounts"] or up["pids"]),
            "landlock": fs_view.view_plan() if up["landlock"] else None, "seccomp": up["seccomp"]}


def environment() -> list[str]:
    """Which walls were up around the submission's worker, in words (the report's environment lines)."""
    up = {w: walls().get(w, "unknown") for w in WALLS}
    lines = [f"WEAK WALLS ({WEAK_ENV}=1): the {', '.join(w)} wall(s) this machine should raise were down"] if (w := weak()) else []
    lines.append("run-time deadlines (the worker's own time, not time spent waiting for a CPU), address-space, "
                 "CPU-time and output limits")
    ns = "own user namespace" if not privileged() else "own namespace"
    said = {  # wall: (the line when it was up, the line when it was down, with why)
        "mounts": (f"a private file system view ({ns}: its own size-capped working folder and /tmp, the reference hidden)",
                   "a private temporary working folder, but no private file system view ({})"),
        "net": (f"no network (own network namespace{', in its ' + ns if not privileged() else ''})", "network NOT blocked ({})"),
        "pids": ("its own PID namespace and /proc: no other process is visible, and every process it starts dies with it",
                 "other processes visible, no PID namespace ({})"),
        "landlock": ("Landlock: it reads only Python's files and writes only its working folder", "no Landlock ({})"),
        "seccomp": ("seccomp: no ptrace, mounts, namespaces or new sessions", "no seccomp filter ({})"),
        "uid": ("its own uid per worker, with a process cap; every process it starts is killed afterwards",
                "no uid of its own ({}): leftover processes are killed by process tree"),
    }
    lines += [good if up[wall] is None else bad.format(up[wall]) for wall, (good, bad) in said.items()]
    return lines
