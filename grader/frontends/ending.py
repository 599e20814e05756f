"""How a command ends: without the interpreter's teardown, which spends a third of
a second or more freeing torch that nobody waits for. Exit handlers still run and output is flushed; a process
whose other threads still run ends the ordinary way, since only the teardown waits for them."""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading


def exit_now(code: int) -> None:
    """os._exit(code) after the exit handlers and a flush; returns only where another thread is alive."""
    if threading.active_count() != 1:
        return
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        pass
    os._exit(code)


def die_with(parent: int) -> None:
    """Killed when `parent` ends, even by kill -9 (it must have started this process from its main thread: the signal
    follows that thread); at once if it has already ended."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG (Linux)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(1)
