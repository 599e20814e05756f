"""The grader's client of a worker: one submission's process, which it can call, time out and kill.

Checks see a submission only through `Subject.call`, `Subject.grads` and `Subject.devices`, whose arguments are
whatever the exercise's function takes (tensors, flags, sizes, a cache) and whose results are the tensors the
exercise's `results` name, checked against the shapes agreed in advance.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from dataclasses import dataclass, field
from typing import Any

import torch

from grader.sandbox import confinement, processes, replies, spawn, uids, wire
from grader.sandbox.clock import MAX_STRETCH, RunClock  # noqa: F401 - MAX_STRETCH: tests/conftest.py reads it here
from grader.sandbox.limits import Limits
from grader.submission.source import Source, place

READY_TIMEOUT = 30.0  # the worker imports torch's meta kernels: the grader's time, not the student's


class StudentError(Exception):
    """The student's function raised or returned something unusable for these inputs (a normal failure); `kind`
    says which (wire.Kind), for the checks that tell them apart."""

    def __init__(self, message: str, where: str = "", kind: wire.Kind = wire.Kind.EXCEPTION,
                 shapes: tuple[tuple[int, ...], tuple[int, ...]] | None = None, unreached: frozenset[str] = frozenset()):
        super().__init__(message)
        self.where = where
        self.kind = kind
        self.shapes = shapes  # (the shape a result has, the one agreed), when that is what was wrong
        self.unreached = unreached  # the inputs, by name, that no gradient reached (a gradients request)


class WorkerLost(BaseException):
    """The worker timed out, died or broke the protocol. A BaseException so that hypothesis stops at once
    instead of shrinking (each retry would cost another timeout)."""


_live: set[int] = set()  # this process's running workers; any other child of the fork server is an orphan


def _as_installed(root: str) -> None:
    """Each package at the folder's top as if pip had installed it: course handouts read their own version
    (CS336's `importlib.metadata.version("cs336_basics")`), which a folder on sys.path alone does not have."""
    for name in sorted(os.listdir(root)):
        if name.isidentifier() and os.path.isfile(os.path.join(root, name, "__init__.py")):
            info = os.path.join(root, f"{name}-0.0.0.dist-info")
            os.makedirs(info, exist_ok=True)
            with open(os.path.join(info, "METADATA"), "w", encoding="utf-8") as f:
                f.write(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.0.0\n")


@dataclass
class Subject:
    source: Source
    entry: str
    results: list[dict]  # the parts of a result, as sandbox.worker.returns.adapt reads them (the exercise's)
    inputs: tuple[str, ...] = ("q", "k", "v")  # the names of the positional inputs: for messages, and an option
    # of one of these names goes in that position
    limits: Limits = field(default_factory=Limits)
    device: str = "cpu"
    leading: bool = False  # an output-only result returned as (out, ...): its first element is graded (reach)
    build: dict | None = None  # a layer handed in as a class: the worker builds it (sandbox.worker.modules)
    blocked: set = field(default_factory=set)
    spent: float = 0.0
    _proc: Any = None  # the worker's multiprocessing Process
    _pidfd: int | None = None
    _pids_wall: bool = False
    _sock: socket.socket | None = None
    _dir: str | None = None
    _slot: int | None = None
    output_overflowed: bool = False  # the submission printed more than limits.output_kb
    _meta_ready: bool = False
    _printed: str = ""  # what closed workers printed
    _calls: int = 0
    _seen: tuple | None = None  # what the last call's clock left: its last look at this worker (RunClock's since)
    _described: dict = field(default_factory=dict)  # describe()'s answers, by context length and sizes

    # -- lifecycle -------------------------------------------------------------------------------------------
    def _start(self) -> None:
        self._dir = tempfile.mkdtemp(prefix="attention-grader-")
        out_path = os.path.join(self._dir, "output.txt")
        open(out_path, "wb").close()
        folder = self._copy_folder()
        self._slot = uids.acquire(self._dir) if confinement.uid_wall() is None else None
        limits = {
            "memory_mb": self.limits.memory_mb,
            "cpu_seconds": int(self.limits.total_timeout) + 5,
            "output_kb": self.limits.output_kb,
            "max_processes": self.limits.max_processes,
            **confinement.worker_walls(self._slot),
        }
        ours, theirs = socket.socketpair()
        self._proc = spawn.start(theirs, out_path, limits)
        self._pidfd = processes.pidfd_of_child(self._proc.pid, self._proc.sentinel)
        self._pids_wall = bool(limits.get("pids"))
        _live.add(self._proc.pid)
        theirs.close()
        self._sock = ours
        header = {
            "op": "load",  # the code travels as the payload: a JSON header is capped at wire.MAX_JSON
            "filename": self.source.filename,
            "module": self.source.module,
            "folder": folder,
            "entry": self.entry,
            "results": self.results,
            "meta": self.device == "cpu",  # the device check will simulate a GPU with meta tensors
            **({"build": self.build} if self.build is not None else {}),
        }
        reply = self._roundtrip(header, self.source.code.encode(), self.limits.load_timeout, "loading the file")
        if not reply[0].get("ok"):
            kind = replies.kind(reply[0])
            msg = self._explain(kind, str(reply[0].get("error", "unknown error"))[:500])
            self.close()
            if kind is wire.Kind.SANDBOX:
                raise StudentError(msg, "", kind)
            where = self._where(reply[0])
            raise StudentError(f"{'exited during import' if kind is wire.Kind.EXIT else 'running the file failed'}: {msg}"
                               + (f"\n    at {where}" if where else ""), where, kind)

    def _copy_folder(self) -> str | None:
        """A folder submission's Python files, copied into the worker's own folder (readable by its uid, and
        nothing the student's code writes lands in the original)."""
        if not self.source.folder:
            return None
        assert self._dir is not None  # made by _start
        dest = os.path.join(self._dir, "src")
        shutil.copytree(self.source.folder, dest, ignore=lambda d, names: [
            n for n in names if n.startswith(".") or n == "__pycache__" or (os.path.isfile(os.path.join(d, n)) and not n.endswith(".py"))
        ])
        _as_installed(dest)
        return dest

    def load(self) -> None:
        if self._sock is None:
            self._start()

    def close(self) -> None:
        self._meta_ready = False
        self._seen = None
        if self._proc is not None:
            _live.discard(self._proc.pid)
            processes.kill(self._pidfd, self._proc.pid, self._slot, spawn.server_pid(), frozenset(_live),
                             self._pids_wall)
            self._proc.join(5)
            self._proc = None
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._dir is not None:
            self._printed = self.output()  # a worker that timed out or died is replaced: keep what it printed
            try:
                self.output_overflowed |= os.path.getsize(os.path.join(self._dir, "output.txt")) >= self.limits.output_kb * 1024
            except OSError:
                pass
            uids.release(self._slot)
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def output(self, limit: int = 4096) -> str:
        """The head of what the submission printed, in every worker it took (capped, decoded leniently)."""
        text = self._printed
        if self._dir is not None and len(text) < limit:
            try:
                with open(os.path.join(self._dir, "output.txt"), "rb") as f:
                    text += f.read(limit).decode("utf-8", "replace")
            except OSError:
                pass
        return text[:limit]

    # -- protocol --------------------------------------------------------------------------------------------
    def _roundtrip(self, header: dict, payload: bytes, timeout: float, what: str) -> tuple[dict, bytes]:
        left = self.limits.total_timeout - self.spent
        if left <= 0:
            raise WorkerLost(f"the submission used up its total time limit of {self.limits.total_timeout:g} s")
        budget = min(timeout, left)
        clock = RunClock(self._proc.pid, self._pidfd, budget, self._seen)
        assert self._sock is not None  # a started worker's
        try:
            wire.send(self._sock, header, payload)
            reply, data = wire.recv(self._sock, clock.left)
        except wire.Deadline:
            self._proc.join(0)
            if self._proc.exitcode is not None:  # it died, but a child of it still holds the socket open
                self._died(header, what)
            self.close()
            if budget < timeout:
                raise WorkerLost(f"the submission used up its total time limit of {self.limits.total_timeout:g} s") from None
            raise WorkerLost(f"timed out after {timeout:g} s while {what}") from None
        except (EOFError, OSError):
            self._proc.join(2)
            self._died(header, what)
        except wire.WireError as e:
            self.close()
            raise WorkerLost(f"the worker broke the protocol while {what}: {e}") from None
        finally:
            self.spent += clock.close()
            self._seen = clock.seen if self._proc is not None else None
        blocked = reply.get("blocked")
        if isinstance(blocked, list):
            self.blocked.update(str(b)[:100] for b in blocked[:5])
        return reply, data

    def _died(self, header: dict, what: str):
        reason = replies.exit_reason(self._proc.exitcode, self.limits)
        self.close()
        during = "during import" if header.get("op") == "load" else f"while {what}"
        raise WorkerLost(f"the worker {reason} {during}") from None

    def _where(self, reply: dict) -> str:
        """'line 12 in attention: scores = ...' (in a notebook 'cell 3, line 2 in ...') for the innermost frame of
        the submission that raised."""
        frames = reply.get("where")
        if not (isinstance(frames, list) and frames and isinstance(frames[-1], list) and len(frames[-1]) == 2):
            return ""
        line, name = frames[-1]
        lines = self.source.code.splitlines()
        if type(line) is not int or not 1 <= line <= len(lines):
            return ""
        return f"{place(self.source, line)} in {str(name)[:60]}: {lines[line - 1].strip()[:120]}"

    def _request(self, args: tuple, kw: dict, expect, tail: list | None = None, **extra) -> tuple[dict, bytes]:
        self.load()
        tensors: list[torch.Tensor] = []
        argspec = [wire.encode(a, tensors) for a in args]
        kwspec = {k: wire.encode(v, tensors) for k, v in kw.items()}
        specs, payload = wire.pack(tensors + (tail or []))
        # The call's number seeds its random generators, whichever process answers (the meta twin takes some
        # calls): a random function gives the same results every run, through every path.
        self._calls += 1
        header = {"op": "call", "tensors": specs, "args": argspec, "kwargs": kwspec,
                  "expect": [replies.agreed(s) for s in expect], "seed": self._calls, "names": list(self.inputs), **extra}
        if self.leading:
            header["leading"] = True
        reply, data = self._roundtrip(header, payload, self.limits.call_timeout, "calling your function")
        if not reply.get("ok"):
            kind = replies.kind(reply)
            msg = self._explain(kind, str(reply.get("error", "unknown error"))[:500])
            if kind is wire.Kind.MEMORY:  # like a timeout: stop the check now, a retry (shrinking) costs as much
                self.close()
                raise WorkerLost(msg)
            if kind is wire.Kind.PROTOCOL:  # the worker's meta twin broke it: the same verdict as if the worker had
                self.close()
                raise WorkerLost(f"the worker broke the protocol while calling your function: {msg}")
            raise StudentError(msg, self._where(reply), kind, replies.shapes(reply), self._unreached(reply))
        return reply, data

    def _explain(self, kind: wire.Kind, msg: str) -> str:
        """The worker's error in words a teacher understands, by the kind the worker named."""
        if kind is wire.Kind.MEMORY:
            return f"memory limit exceeded ({self.limits.memory_mb} MiB): {msg}"
        if kind is wire.Kind.OUTPUT:
            return f"output too large (more than {self.limits.output_kb} KiB printed or written): {msg}"
        if kind is wire.Kind.EXIT:
            return f"SystemExit ({msg} was called)"
        if kind is wire.Kind.MISSING:
            return (f"your code imports {msg}, which is neither in your submission nor installed where it is graded; "
                    f"if it is a package, the course lists it in the rubric's packages and the grader installs it "
                    f"(pip install {msg})")
        return msg

    def _unreached(self, reply: dict) -> frozenset[str]:
        """The inputs a gradients request found no gradient for: names the grader sent, nothing else."""
        names = reply.get("unreached")
        return frozenset(n for n in names if n in self.inputs) if isinstance(names, list) else frozenset()

    def _tensors(self, reply: dict, data: bytes, allowed: set[str] | None = replies.FLOATS) -> list[torch.Tensor]:
        try:
            return wire.unpack(reply.get("tensors"), data, allowed)
        except wire.WireError as e:
            raise WorkerLost(f"the worker sent malformed tensors: {e}") from None

    def call(self, *args, expect, return_inputs: bool = False, **kw) -> list[torch.Tensor]:
        """The result's tensors (in the exercise's order, of the `expect`ed shapes) and, on request, every input
        tensor as the function left them; validated CPU tensors."""
        reply, data = self._request(args, kw, expect, return_inputs=return_inputs, device=self.device)
        got = self._tensors(reply, data, None if return_inputs else replies.FLOATS)
        sent: list[torch.Tensor] = []
        for a in list(args) + list(kw.values()):
            wire.encode(a, sent)
        want = [(replies.allowed(s), None) for s in expect] + ([([list(t.shape)], t.dtype) for t in sent] if return_inputs else [])
        if not return_inputs and 0 < len(want) - len(got) <= self._optional():
            want = want[: len(got)]  # an optional part asked for (a layer's weights) is missing: the function has none
        if len(got) != len(want) or any(list(t.shape) not in s or (d is None and not t.is_floating_point()) or (d is not None and t.dtype != d)
                                        for t, (s, d) in zip(got, want)):
            raise WorkerLost("the worker sent tensors of shapes the grader did not ask for")
        return got

    def _optional(self) -> int:
        """How many of the result's last tensors belong to optional parts (a layer's weights), which may be missing."""
        n = 0
        for part in reversed(self.results):
            if not part.get("optional"):
                break
            n += len(part["labels"])
        return n

    def grads(self, *args, grad_out, expect, **kw) -> list[torch.Tensor]:
        """Gradients of the positional tensor inputs for loss = sum(out * grad_out)."""
        reply, data = self._request(args, kw, expect, tail=[grad_out], grad=True, device=self.device)
        got = self._tensors(reply, data)
        leaves = [a for a in args if isinstance(a, torch.Tensor)]
        if len(got) != len(leaves) or [t.shape for t in got] != [t.shape for t in leaves]:
            raise WorkerLost("the worker sent gradients of shapes the grader did not ask for")
        return got

    def describe(self, context: int, d: int | None = None, heads: int | None = None,
                 dropout: float | None = None) -> dict:
        """A layer class as the worker built it (sandbox.worker.modules.Layer.describe), d wide with `heads` heads
        (the worker's probe build where not given): its class and signature, how it was built (the constructor's
        arguments, the config's attributes it read, the module globals set), its parameters, which take which
        weights (`pieces`: [role, first row, last row + 1]), the roles present and what could not be mapped.
        The reply is data: every field is checked and cut to size; StudentError when the worker could not answer."""
        sizes = {k: v for k, v in (("d", d), ("heads", heads), ("dropout", dropout)) if v is not None}
        key = (context, *sorted(sizes.items()))
        if key in self._described:
            return self._described[key]
        self.load()
        reply, _ = self._roundtrip({"op": "describe", "context": int(context), **sizes}, b"", self.limits.call_timeout,
                                   "building your class")
        if not reply.get("ok"):
            kind = replies.kind(reply)
            raise StudentError(self._explain(kind, str(reply.get("error", "unknown error"))[:500]), self._where(reply), kind)
        found = reply.get("layout")
        if not isinstance(found, dict):
            raise WorkerLost("the worker sent a malformed reply")
        self._described[key] = replies.layout(found)
        return self._described[key]

    def devices(self, device: str, *args, expect, **kw) -> list[str]:
        """Run on the meta device and return the device types of the result's tensors."""
        if not self._meta_ready:  # the worker may still be importing torch's meta kernels: its time, not the student's
            self.load()
            reply, _ = self._roundtrip({"op": "ready"}, b"", READY_TIMEOUT, "preparing the device check")
            self._meta_ready = bool(reply.get("ok"))
        reply, _ = self._request(args, kw, expect, device=device)
        devs = reply.get("devices")
        if not (isinstance(devs, list) and len(devs) == len(expect) and all(isinstance(d, str) for d in devs)):
            raise WorkerLost("the worker sent a malformed reply")
        return devs
