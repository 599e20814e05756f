"""The uids workers run under as root: one slot each, from FIRST_UID, held by a lock file so that graders running
side by side never share one. A uid whose last worker's processes still run (a grader killed with -9) is cleared
before its next worker gets it."""

from __future__ import annotations

import fcntl
import os

from grader.sandbox import processes

FIRST_UID = 61000
SLOTS = 256
PROBE_UID = FIRST_UID + SLOTS  # used only by the walls probe, which is alone under it
_LOCKS = "/tmp/attention-grader-slots"
_held: dict[int, int] = {}
_next = 0  # the slot this process tries first


def acquire(workdir: str) -> int | None:
    """A free uid for one worker (held by a lock file until `release`), its working folder given to it; for a
    grader whose uid wall is up (confinement.uid_wall)."""
    os.makedirs(_LOCKS, mode=0o700, exist_ok=True)
    global _next
    for i in range(SLOTS):  # round the slots: the last worker's namespace may still be dying in its own
        uid = FIRST_UID + (_next + i) % SLOTS
        fd = os.open(os.path.join(_LOCKS, str(uid)), os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        _held[uid] = fd
        _next = (uid - FIRST_UID + 1) % SLOTS
        if _running_as(uid):  # a previous grader killed with -9 may have left something behind
            processes.kill_uid(uid)
        for root, dirs, files in os.walk(workdir):
            for name in [root] + [os.path.join(root, n) for n in dirs + files]:
                os.chown(name, uid, uid)
        return uid
    raise RuntimeError("no free worker slot")


def release(uid: int | None) -> None:
    fd = _held.pop(uid, None) if uid is not None else None
    if fd is not None:
        os.close(fd)


def _running_as(uid: int) -> bool:
    """Whether any process runs as `uid` (its real uid, in /proc/PID/status: /proc/PID itself is root's once a
    process has changed its uid). A look costs a few ms; the fork that `processes.kill_uid` takes, 25 ms and more."""
    mark = f"\nUid:\t{uid}\t".encode()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if mark in processes.read_proc(f"/proc/{name}/status"):
                    return True
            except OSError:
                pass
    return False
