"""The walls around a worker process: what it may use of the machine.

Runs inside the worker before any student code. As root every wall is up; as an ordinary user (a student's
laptop) the ones that need privileges are skipped and `active()` says which were raised.
"""

from __future__ import annotations

import ctypes
import os
import resource

PR_SET_CHILD_SUBREAPER = 36
CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def become_subreaper() -> bool:
    return _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def _unshare_net() -> bool:
    return _libc.unshare(CLONE_NEWNET) == 0


def _limit(res: int, value: int) -> None:
    try:
        resource.setrlimit(res, (value, value))
    except (ValueError, OSError):
        pass


def enter(out_path: str, limits: dict) -> None:
    """Cut the worker off: own session, private cwd, rlimits, no network, and its own uid when root."""
    os.setsid()
    os.chdir(os.path.dirname(out_path))
    mb = 1 << 20
    _limit(resource.RLIMIT_AS, limits["memory_mb"] * mb)
    _limit(resource.RLIMIT_CPU, limits["cpu_seconds"])
    _limit(resource.RLIMIT_FSIZE, limits["output_kb"] * 1024)
    _limit(resource.RLIMIT_NOFILE, 256)
    _limit(resource.RLIMIT_CORE, 0)
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a full output file fails the write, it does not kill
    if os.geteuid() == 0:
        _unshare_net()
        uid = limits.get("uid")
        if uid:
            _limit(resource.RLIMIT_NPROC, limits["max_processes"])
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
