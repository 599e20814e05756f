"""A worker's resource limits: address space, CPU time, output size, open files, no core dumps, and a cap on its
processes, counted per user as the kernel counts them."""

from __future__ import annotations

import os
import resource
import signal


def _limit(res: int, value: int) -> None:
    try:
        resource.setrlimit(res, (value, value))
    except (ValueError, OSError):
        pass


def _processes_of(uid: int) -> int:
    count = 0
    for name in os.listdir("/proc"):
        try:
            count += name.isdigit() and os.stat(f"/proc/{name}").st_uid == uid
        except OSError:
            pass
    return count


def apply(limits: dict, uid: int | None) -> None:
    """A worker's `limits`, set before any namespace; with a uid of its own, its process cap waits for
    `cap_own_uid`, just before the uid changes."""
    mb = 1 << 20
    _limit(resource.RLIMIT_AS, limits["memory_mb"] * mb)
    _limit(resource.RLIMIT_CPU, limits["cpu_seconds"])
    _limit(resource.RLIMIT_FSIZE, limits["output_kb"] * 1024)
    _limit(resource.RLIMIT_NOFILE, 256)
    _limit(resource.RLIMIT_CORE, 0)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a full output file fails the write, it does not kill
    if not uid and os.geteuid() != 0:  # the count is per user: what the user already runs, plus the cap
        _limit(resource.RLIMIT_NPROC, _processes_of(os.getuid()) + limits["max_processes"])


def cap_own_uid(max_processes: int) -> None:
    _limit(resource.RLIMIT_NPROC, max_processes)
