"""A call's deadline counts the worker's own time: the machine's load is not the student's, their own processes
are. Measured on real processes sharing one CPU, so the test holds on any machine with at least one."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from grader.sandbox.clock import RunClock

CPU = sorted(os.sched_getaffinity(0))[0]
WORK = 0.4  # CPU seconds the timed process spends

_SPIN = f"""
import os, sys, time
os.sched_setaffinity(0, {{{CPU}}})
for _ in range(int(sys.argv[1])):  # its own children, spinning on the same CPU
    if os.fork() == 0:
        while True:
            pass
sys.stdin.readline()  # the clock has started
end = time.process_time() + {WORK}
while time.process_time() < end:
    pass
print("done", flush=True)
time.sleep(60)
"""


def _spinner() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", f"import os\nos.sched_setaffinity(0, {{{CPU}}})\nwhile True: pass"])


def _timed(children: int, neighbours: int) -> tuple[float, float]:
    """(time the clock counted, wall time) for WORK CPU seconds done beside `children` of its own and
    `neighbours` that are not, all on one CPU."""
    others = [_spinner() for _ in range(neighbours)]
    # One session (and so one autogroup) with its neighbours: the kernel gives each process a fair share.
    proc = subprocess.Popen([sys.executable, "-c", _SPIN, str(children)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, process_group=0)
    pidfd = os.pidfd_open(proc.pid)
    try:
        time.sleep(0.5)  # its children are forked and running
        clock = RunClock(proc.pid, pidfd, budget=60)
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.stdout.readline() == "done\n"
        wall = time.monotonic() - clock.start
        return clock.close(), wall
    finally:
        os.killpg(proc.pid, 9)
        proc.wait()
        os.close(pidfd)
        for o in others:
            o.kill()
            o.wait()


@pytest.mark.parametrize("children, neighbours", [(0, 2), (2, 0), (1, 1)])
def test_it_counts_its_own_processes_and_not_the_machines_load(children, neighbours):
    """The timed process and its children share the CPU's time with its neighbours. The clock counts its own
    share of it, whatever else loads the machine: what it and its children ran."""
    used, wall = _timed(children, neighbours)
    own = (children + 1) * WORK
    assert wall > 2 * WORK  # it did wait for the CPU
    assert abs(used - own) < 0.2 * own, f"counted {used:.2f} s of {wall:.2f} s, its own time is {own:.2f} s"
