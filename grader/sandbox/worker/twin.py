"""The meta twin: a fork of a worker that answers the device check's meta-device calls.

Without the meta kernels preloaded (one check, not a batch), importing them in the worker would cost a second on
the way to the device check. A fork of the worker, taken right after loading, imports them on the other core while
the worker answers the grader, then answers the meta-device calls, which the worker relays. It is under the same
walls, and its death is the worker's death, so the grader sees no difference.
"""

from __future__ import annotations

import os
import signal
import socket
from collections.abc import Callable

from grader.sandbox import wire
from grader.sandbox.worker import warm
from grader.sandbox.worker.walls import pid_namespace


class Twin:
    """The worker's end of its twin: a socket and the twin's pid. `killed` once it broke the protocol."""

    def __init__(self, sock: socket.socket, pid: int):
        self.sock, self.pid, self.killed = sock, pid, False

    @classmethod
    def fork(cls, grader: socket.socket, serve: Callable[[socket.socket], None]) -> Twin | None:
        """A twin that warms the meta kernels, then `serve`s on its socket; None when it cannot be forked (the
        process cap, say: the worker then answers the meta calls itself, only later)."""
        ours, theirs = socket.socketpair()
        try:
            pid = os.fork()
        except OSError:
            ours.close()
            theirs.close()
            return None
        if pid == 0:
            try:
                grader.close()  # the grader must see EOF when the worker dies, whatever the twin does
                ours.close()
                warm.warm_meta()
                serve(theirs)
            finally:
                os._exit(1)
        theirs.close()
        return cls(ours, pid)

    def ask(self, req: dict, payload: bytes) -> tuple[dict, bytes]:
        """The twin's reply to a frame. When the twin dies, so does this worker, the same way."""
        try:
            wire.send(self.sock, req, payload)
            return wire.recv(self.sock)
        except wire.WireError as e:  # student code in the twin wrote into its socket: the grader ends this worker
            os.kill(self.pid, signal.SIGKILL)
            self.killed = True
            return {"ok": False, "kind": wire.Kind.PROTOCOL, "error": str(e)}, b""
        except (EOFError, OSError):  # it died
            pass
        try:
            code = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        except (OSError, ValueError):
            code = 1
        if code < 0:
            pid_namespace.end_by_signal(-code)
        os._exit(code)
