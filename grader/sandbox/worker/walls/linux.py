"""The Linux calls the walls make that Python's os module lacks (prctl, unshare, mount, raw syscalls), through
ctypes, each failure an OSError; and the closing of inherited descriptors, which must not depend on /proc."""

from __future__ import annotations

import ctypes
import os
import resource

PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_SET_CHILD_SUBREAPER = 1, 38, 36
CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x00020000, 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 4096, 16384, 1 << 18
libc = ctypes.CDLL(None, use_errno=True)


def become_subreaper() -> bool:
    return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int, what: str) -> None:
    check(libc.unshare(flags), f"unshare({what})")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = lambda s: s.encode() if s is not None else None  # noqa: E731
    check(libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)), f"mount {target}")


def mount_proc() -> None:
    """A /proc of the PID namespace this process is PID 1 of (mounted by that PID 1: /proc/self is then itself)."""
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)


def no_new_privs() -> None:
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")


def close_fds(keep: set[int]) -> None:
    """Close every inherited descriptor but `keep` (multiprocessing hands workers its fork server's and resource
    tracker's pipes, which run as root). close_range, not /proc/self/fd: nothing here may depend on /proc."""
    fd = 0
    for k in sorted(keep) + [max(resource.getrlimit(resource.RLIMIT_NOFILE)[0], max(keep) + 1)]:
        if fd < k:  # os.closerange(n, n) closes everything from n on (close_range(n, -1))
            os.closerange(fd, k)
        fd = k + 1
