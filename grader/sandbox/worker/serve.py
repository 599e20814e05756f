"""A worker's life: set up in a fresh fork of the fork server (its descriptors, its walls, quiet streams, the
import blocker), then answer the grader's frames with frames until the socket closes.

It never decides a verdict: whatever it says is checked again by the grader. What a result holds (its parts'
names, the shapes agreed) comes with each request, from the exercise.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
from typing import Any

from grader.sandbox import wire
from grader.sandbox.worker import blocker, failures, loading, warm
from grader.sandbox.worker.call import call
from grader.sandbox.worker.errors import BadOutput
from grader.sandbox.worker.streams import QuietStream
from grader.sandbox.worker.twin import Twin
from grader.sandbox.worker.walls import linux
from grader.sandbox.worker.walls.enter import enter


class _Broken(Exception):
    """A wall failed to go up: this worker runs no student code."""


def main(sock, out_path: str, limits: dict) -> None:
    """Entry point of a forked worker: set up the walls, then serve frames until the socket closes."""
    out_fd = os.open(out_path, os.O_WRONLY | os.O_APPEND)  # before the walls: the private view hides the file
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    linux.close_fds({0, 1, 2, sock.fileno()})
    try:
        enter(out_path, limits)
        broken = ""
    except OSError as e:  # never run student code with a wall missing that the report says is up
        broken = f"the grader could not set up its sandbox ({e}); this is not your fault, tell your teacher"
    sys.stdout = sys.stderr = QuietStream(1)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    blocker.seal()
    _Server(sock, broken).serve()


class _Server:
    """Answers the grader's frames, one at a time, until the socket closes."""

    def __init__(self, sock: socket.socket, broken: str = "", fn=None, filename: str = "", parts=None):
        self.sock, self.broken, self.fn, self.filename, self.parts = sock, broken, fn, filename, parts
        self.twin: Twin | None = None

    def serve(self) -> None:
        try:
            while True:
                self._serve_one()
        except MemoryError:  # receiving a frame or sending a reply: no frame can say so, the exit status does
            os._exit(wire.EXIT_MEMORY)

    def _serve_one(self) -> None:
        try:
            req, payload = wire.recv(self.sock)
        except (EOFError, OSError, wire.WireError):
            os._exit(0)
        if self.twin and (req.get("device") == "meta" or req.get("op") == "ready"):
            reply, data = self.twin.ask(req, payload)
            if self.twin.killed:
                self.twin = None
        else:
            reply, data = self._answer(req, payload)
        try:
            wire.send(self.sock, reply, data)
        except OSError:
            os._exit(0)
        if req.get("op") == "load" and req.get("meta") and reply["ok"] and not warm.meta_warm:
            self.twin = Twin.fork(self.sock, self._twin_server)

    def _twin_server(self, sock: socket.socket) -> None:
        """The twin's server: this one's loaded function, on the twin's socket."""
        _Server(sock, fn=self.fn, filename=self.filename, parts=self.parts).serve()

    def _answer(self, req: dict, payload: bytes) -> tuple[dict, bytes]:
        reply: dict[str, Any]
        try:
            if self.broken:
                raise _Broken(self.broken)
            if req["op"] == "load":
                self.filename = req["filename"]
                self.parts = req["results"]
                self.fn = loading.load(req, payload)
                reply, data = {"ok": True}, b""
            elif req["op"] == "ready":
                reply, data = {"ok": True}, b""
            elif req["op"] == "describe":  # a layer class: how it was built and which parameters take the weights
                sizes: dict[str, float] = {k: int(req[k]) for k in ("d", "heads") if k in req}
                if "dropout" in req:
                    sizes["dropout"] = float(req["dropout"])
                reply, data = {"ok": True, "layout": self.fn.describe(int(req.get("context", 8)), **sizes)}, b""
            else:
                reply, data = call(self.fn, self.parts, req, payload)
        except BadOutput as e:
            reply, data = {"ok": False, "kind": wire.Kind.BAD_OUTPUT, "error": str(e), "shapes": e.shapes,
                           "unreached": e.unreached}, b""
        except _Broken as e:
            reply, data = {"ok": False, "kind": wire.Kind.SANDBOX, "error": str(e)}, b""
        except BaseException as e:  # noqa: BLE001 - student code may raise anything, SystemExit and KeyboardInterrupt included
            reply = {"ok": False, "kind": failures.kind(e), "error": failures.describe(e),
                     "where": failures.student_frames(e, self.filename)}
            data = b""
        reply["blocked"] = blocker.Blocker.attempts[:5]
        return reply, data
