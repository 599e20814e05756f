"""A worker's processes: found in /proc, and signalled only through pidfds, never by a pid that may already name
another process (pid_max is 32768 here).

With its own PID namespace, killing a worker ends every process it started (the kernel kills a namespace with its
first process); as root without one, its uid's `kill(-1)` follows. Without either, its process tree and the fork
server's orphans are walked, and each is signalled only through a pidfd proven to be the process listed.
"""

from __future__ import annotations

import os
import select
import signal


def pidfd_of_child(pid: int, sentinel: int | None) -> int | None:
    """A pidfd for a worker the fork server just forked, or None when it is already gone. The fork server writes
    to `sentinel` once it has reaped the worker: while nothing is there, `pid` is still the worker's."""
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return None
    if sentinel is not None and select.select([sentinel], [], [], 0)[0]:
        os.close(fd)
        return None
    return fd


def signal_pidfd(fd: int | None, sig: int = signal.SIGKILL) -> None:
    if fd is None:
        return
    try:
        signal.pidfd_send_signal(fd, sig)
    except (ProcessLookupError, PermissionError, OSError):
        pass


def read_proc(path: str) -> bytes:
    """A /proc file's first 4 KiB; os.read, not open(): the deadline clock reads several for every call."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, 4096)
    finally:
        os.close(fd)


def proc_stat(pid: int) -> list[bytes]:
    """The fields of /proc/PID/stat from the third (state) on: the command name before them may hold anything."""
    return read_proc(f"/proc/{pid}/stat").rsplit(b")", 1)[1].split()


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, start time) of a process; pid and start time together name one process for good."""
    try:
        fields = proc_stat(pid)
        return fields[0].decode(), int(fields[1]), int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def _tree() -> dict[int, list[tuple[int, int]]]:
    """ppid -> live (not zombie) children as (pid, start time), from /proc."""
    tree: dict[int, list[tuple[int, int]]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (st := _stat(int(name))) and st[0] != "Z":
            tree.setdefault(st[1], []).append((int(name), st[2]))
    return tree


def _kill_listed(pid: int, start: int, ppid: int) -> None:
    """SIGKILL the process listed as (pid, start) under ppid, through a pidfd proven to be that process."""
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return
    try:
        st = _stat(pid)
        if st is not None and st[2] == start and st[1] == ppid:
            signal_pidfd(fd)
    finally:
        os.close(fd)


def kill_uid(uid: int) -> None:
    """SIGKILL every process running as `uid`, from a child that takes that uid (kill(-1) reaches its own)."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgid(uid)
            os.setuid(uid)
            for _ in range(1000):
                os.kill(-1, signal.SIGKILL)  # every process of this uid but this one
        except ProcessLookupError:
            os._exit(0)
        except BaseException:  # noqa: BLE001 - a forked child: whatever it raised, it exits, never returns
            os._exit(1)
        os._exit(2)
    os.waitpid(pid, 0)


def kill(pidfd: int | None, pid: int, uid: int | None, server: int | None = None, live: frozenset = frozenset(),
         pids_wall: bool = False) -> None:
    """Kill a worker and everything it started. With a PID namespace of its own, killing it kills the namespace
    (PID 1 dies with the worker, its relay, and the kernel kills the rest); with a uid of its own, `kill(-1)` as
    that uid follows; without either, its process tree and every orphan its fork server (`server`, a child
    subreaper) took in that is not a `live` worker, repeated until none is left."""
    signal_pidfd(pidfd)
    if pids_wall:
        return
    if uid is not None:
        kill_uid(uid)
        return
    for _ in range(100):
        tree = _tree()
        # its children by pid only while it lives (then the pid is its own); a dead worker's went to the server
        alive = pidfd is not None and not select.select([pidfd], [], [], 0)[0]
        todo = [(c, s, pid) for c, s in tree.get(pid, [])] if alive else []
        if server:
            todo += [(c, s, server) for c, s in tree.get(server, []) if c not in live and c != pid]
        victims = []
        while todo:
            victims.append(v := todo.pop())
            todo += [(c, s, v[0]) for c, s in tree.get(v[0], [])]
        if not victims:
            return
        for v in victims:
            _kill_listed(*v)
