"""The worker's own PID namespace, and the relay that the grader knows the worker by.

After unshare(CLONE_NEWPID) the caller stays outside it; only its next child is inside, as its PID 1. So the
worker forks once: the child (PID 1, which mounts the new /proc and serves the grader) and the parent, a relay
that the grader knows by pid, which reads nothing (its /proc/self would be dangling), waits, and ends as the child
ended. The child dies with the relay (PR_SET_PDEATHSIG), and the kernel kills the namespace with it.
"""

from __future__ import annotations

import os
import select
import signal
import socket

from grader.sandbox.worker.walls import linux
from grader.sandbox.worker.walls.linux import CLONE_NEWPID, PR_SET_PDEATHSIG

_to_relay: int | None = None  # PID 1's end of the socket to its relay


def unshare_pids() -> None:
    linux.unshare(CLONE_NEWPID, "CLONE_NEWPID")


def split() -> int:
    """Fork into the new PID namespace: returns in the child (its PID 1, with its own /proc) its end of the socket
    to the relay, for `die_with_relay`; the parent becomes the relay and never returns."""
    global _to_relay
    ours, theirs = socket.socketpair()
    pid = os.fork()
    if pid:
        ours.close()
        _relay(pid, theirs.detach())
    theirs.close()
    _to_relay = ours.detach()
    die_with_relay(_to_relay)
    linux.mount_proc()
    return _to_relay


def end_by_signal(sig: int) -> None:
    """End this worker as if killed by `sig`. PID 1 of a namespace cannot signal itself: its relay does, to
    itself, once this process has exited."""
    if _to_relay is not None:
        try:
            os.write(_to_relay, bytes([sig]))
        except OSError:
            pass
        os._exit(1)
    signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)
    os._exit(1)


def die_with_relay(r: int) -> None:
    """SIGKILL when the relay dies (set again after a change of uid, which clears it); if the relay is already
    gone, its end of the socket is closed: stop here."""
    linux.check(linux.libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
    if select.select([r], [], [], 0)[0]:
        os._exit(1)


def _relay(child: int, keep: int) -> None:
    """The worker's first process, outside the PID namespace: holds nothing but the socket whose closing tells the
    child it is gone, and ends as the child ends (a signal as that signal, or as the child asked through that
    socket: see `end_by_signal`). Reads no /proc."""
    linux.close_fds({keep})
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(1)
    code = os.waitstatus_to_exitcode(status)
    os.set_blocking(keep, False)
    try:
        asked = os.read(keep, 1)
    except OSError:
        asked = b""
    if asked and 0 < asked[0] < signal.NSIG:
        code = -asked[0]
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code & 0xFF)
