"""A call's deadline in the worker's own time, read from /proc: the machine's load is not the student's, the
worker's own processes are. What escapes the count is bounded by MAX_STRETCH."""

from __future__ import annotations

import os
import select
import time

from grader.sandbox import processes

MAX_STRETCH = 8.0  # a deadline in the worker's own time ends within this many times its length in wall time
REUSE = 0.02  # seconds: a call's clock starts from the last one's end, if that recent (a few ms of waits at most)
SETTLE = 0.05  # seconds: calls this short in all, back to back, count at their wall time until one look settles them

_TICK = os.sysconf("SC_CLK_TCK")


def _tree(root: int) -> tuple[dict[int, tuple[int, int]], float]:
    """The tasks of `root` and all its descendants: {thread id: (ns on a CPU, ns waiting for one)}, and the CPU
    seconds the tree has used in all, those of exited threads and of reaped children included (/proc/PID/stat)."""
    tasks: dict[int, tuple[int, int]] = {}
    cpu, todo, seen = 0.0, [root], 0
    while todo and seen < 4 * 256:  # the worker's processes are capped: this bounds a tree read mid-fork
        pid = todo.pop()
        seen += 1
        try:
            times = processes.proc_stat(pid)[11:15]  # utime stime cutime cstime
            cpu += sum(map(int, times)) / _TICK
            tids = os.listdir(f"/proc/{pid}/task")
        except (OSError, ValueError, IndexError):
            continue
        for tid in tids:
            try:
                ran, waited = processes.read_proc(f"/proc/{pid}/task/{tid}/schedstat").split()[:2]
                tasks[int(tid)] = (int(ran), int(waited))
                todo += map(int, processes.read_proc(f"/proc/{pid}/task/{tid}/children").split())
            except (OSError, ValueError):
                pass
    return tasks, cpu


class RunClock:
    """A deadline in the worker's own time: wall time less the longest time one of its tasks (threads of its
    processes, the meta twin's included) spent waiting for a CPU that the rest of its own tree did not use. A
    loaded machine does not fail calls; a worker's own processes and threads (a fork bomb) make it wait on its own
    time. What escapes the count (a child reaped unseen) is bounded by MAX_STRETCH.

    A look at /proc costs as much as a small call, so back-to-back calls share one: a call that ends within SETTLE
    of the span's last look counts at its wall time (never less than its own time), and the call that ends the
    span counts the span's own time less what the calls before it in the span were counted."""

    def __init__(self, pid: int, pidfd: int | None, budget: float, since: tuple | None = None):
        """since: (when, what, counted) the previous call's clock left: when it ended, its last look at this worker,
        idle since, and the wall time counted since that look."""
        self.pid, self.budget = pid, budget
        self.pidfd = os.dup(pidfd) if pidfd is not None else None  # its own: the worker may be closed meanwhile
        self.start = time.monotonic()
        self.last: tuple[dict[int, tuple[int, int]], float] = ({}, 0.0)
        self.first: tuple[dict[int, tuple[int, int]], float]
        self.counted: float
        if since is not None and self.start - since[0] < REUSE:  # recent
            self.first, self.counted = since[1], since[2]
        else:
            self.first, self.counted = self._look(), 0.0
        self.last = self.first

    def _look(self) -> tuple[dict[int, tuple[int, int]], float]:
        if self.pidfd is None or select.select([self.pidfd], [], [], 0)[0]:
            return self.last  # it is gone: its pid may be another process's now
        tree = _tree(self.pid)
        return tree if not select.select([self.pidfd], [], [], 0)[0] else self.last

    def used(self) -> float:
        elapsed = self.counted + time.monotonic() - self.start  # since the span's first look
        (before, cpu0), (now, cpu) = self.first, self.last
        spent = cpu - cpu0
        credit = 0.0
        for tid, (ran, waited) in now.items():
            ran0, waited0 = before.get(tid, (0, 0))
            ran_s, waited_s = (ran - ran0) / 1e9, (waited - waited0) / 1e9
            credit = max(credit, waited_s - max(0.0, spent - ran_s))
        return max(elapsed - credit, elapsed / MAX_STRETCH) - self.counted

    def left(self) -> float:
        elapsed = time.monotonic() - self.start
        if elapsed < self.budget:  # the time used is at most the time elapsed: no need to look yet
            return self.budget - elapsed
        self.last = self._look()
        return self.budget - self.used()

    def close(self) -> float:
        """The time used, once the worker's answer is in (or it is gone)."""
        elapsed = time.monotonic() - self.start
        if self.last is self.first and self.counted + elapsed < SETTLE:
            self.seen = (time.monotonic(), self.first, self.counted + elapsed)
            used = elapsed
        else:
            self.last = self._look()
            self.seen = (time.monotonic(), self.last, 0.0)
            used = self.used()
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None
        return used
