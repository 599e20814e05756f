"""The grader's side of the walls: a uid per worker slot when root, and killing every process a worker left.

Process groups are not enough (a `setsid()` grandchild leaves the group), so as root each worker runs under a
uid of its own and `kill(-1, SIGKILL)` from that uid removes everything it started, repeated until nothing is
left. Without root the worker's process group and session are killed: fewer walls, said in the report.
"""

from __future__ import annotations

import fcntl
import functools
import os
import signal
import stat
import sysconfig

FIRST_UID = 61000
SLOTS = 256
_LOCKS = "/tmp/attention-grader-slots"
_held: dict[int, int] = {}


def privileged() -> bool:
    return os.geteuid() == 0


def _others_can_read(path: str) -> bool:
    """True when a process of another uid can reach and read `path` (every parent traversable)."""
    path = os.path.realpath(path)
    parts = path.split(os.sep)
    for i in range(2, len(parts) + 1):
        mode = os.stat(os.sep.join(parts[:i]) or os.sep).st_mode
        if not mode & stat.S_IXOTH:
            return False
    return bool(os.stat(path).st_mode & stat.S_IROTH)


@functools.cache
def uid_wall() -> str | None:
    """None when workers can run under their own uid, else why not (the report says so)."""
    if not privileged():
        return "not running as root"
    for path in {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"], os.path.dirname(torch_dir())}:
        if not _others_can_read(path):
            return f"Python's files under {path} are not readable by other users"
    return None


def torch_dir() -> str:
    import importlib.util

    return os.path.dirname(importlib.util.find_spec("torch").origin)


def acquire(workdir: str) -> int | None:
    """A free uid for one worker (held by a lock file until `release`); None when not root."""
    if uid_wall() is not None:
        return None
    os.makedirs(_LOCKS, mode=0o700, exist_ok=True)
    for uid in range(FIRST_UID, FIRST_UID + SLOTS):
        fd = os.open(os.path.join(_LOCKS, str(uid)), os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        _held[uid] = fd
        _kill_uid(uid)  # a previous grader killed with -9 may have left something behind
        for root, dirs, files in os.walk(workdir):
            for name in [root] + [os.path.join(root, n) for n in dirs + files]:
                os.chown(name, uid, uid)
        return uid
    raise RuntimeError("no free worker slot")


def release(uid: int | None) -> None:
    fd = _held.pop(uid, None) if uid is not None else None
    if fd is not None:
        os.close(fd)


def _kill_uid(uid: int) -> None:
    pid = os.fork()
    if pid == 0:
        try:
            os.setgid(uid)
            os.setuid(uid)
            for _ in range(1000):
                os.kill(-1, signal.SIGKILL)  # every process of this uid but this one
        except ProcessLookupError:
            os._exit(0)
        except BaseException:
            os._exit(1)
        os._exit(2)
    os.waitpid(pid, 0)


def kill(pid: int, uid: int | None) -> None:
    """Kill a worker and everything it started."""
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
        except (ProcessLookupError, PermissionError):
            pass
    if uid is not None:
        _kill_uid(uid)
