"""A Dask worker's warm grader process: `python -P -m grader.frontends.warm_grader` (-P: the worker's folder is not on
its path), one request and one reply per line of JSON on its standard input and output.

It is the local pool's grader process (pool.warm_up, pool.grade_one) started with subprocess rather than
multiprocessing: a Dask worker process is daemonic, and a daemonic process may not start multiprocessing children
(dask/distributed#2142, #2718), while a grader process starts a fork server whose forked workers run the student
code. It imports torch once and grades submission after submission. It warms up before it reads a request or starts
a thread, so that its fork server is a fork of it (sandbox.spawn): torch imported once, not again in a fresh
interpreter beside it, and no rubric or course secret in what its workers inherit. `--scheduler local:N` forks its
grader processes from the batch command instead, as it connects, and they run the same loop (`main`).

`graders` is the other end, in the Dask worker: it starts, feeds and kills them (frontends.cluster.grade_task).

A request: {"path", "copy", "refused", "folder", "hash", "loading", "rubric", "origin", "key", "salt"}; `path` is the
submission's path as the batch command was given it (what the reports name), `copy` its staged copy as the Dask
worker unpacked it, `refused` why the batch command could not stage it. The rubric and the grader's version
are checked against `key`, the batch command's grader hash, before grading: a mismatch is an error, never a
silent regrade under another rubric. A reply: {"grade": the grade as JSON text} or {"error": one line}.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time


class Mismatch(Exception):
    """This worker would not grade as the batch command expects."""


def _watch_parent(parent: int) -> None:
    """Die with the Dask worker, even mid-submission and even on kill -9 (PR_SET_PDEATHSIG would follow the thread
    that started this process, and a Dask worker's threads come and go)."""
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(1)


def main(requests=None, replies=None) -> int:
    """Requests and replies on stdin and stdout, or on the text streams given (a grader process that local:N forked
    from the batch command: frontends.cluster)."""
    replies = replies or os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # anything else printed here goes to the worker's log, not into the replies
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the batch command's, not a worker's
    parent = os.getppid()
    from grader.frontends import pool

    pool.warm_up()
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    rubrics: dict = {}
    for line in requests or sys.stdin:
        req = json.loads(line)
        try:
            reply = {"grade": _handle(req, rubrics)}
        except Mismatch as e:
            reply = {"error": str(e)}
        except Exception as e:  # noqa: BLE001 - this submission's error; the process stays for the next one
            reply = {"error": f"{type(e).__name__}: {e}".splitlines()[0]}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()
    return 0


def _handle(req: dict, rubrics: dict) -> str:
    from pathlib import Path

    from grader.checks.draws import Draws
    from grader.frontends import pool, store
    from grader.submission.staging import Staged

    draws = Draws(bytes.fromhex(req["salt"]))
    which = (req["rubric"], req["origin"])
    if which not in rubrics:
        rubrics[which] = pool.rubric_from_json(*which)
    rubric = rubrics[which]
    here = store.grader_hash(rubric, req["loading"], draws)
    if here != req["key"]:
        raise Mismatch(f"this Dask worker grades differently from the batch command (attention-grader "
                       f"{store.release()} here, {req['release']} there, or the rubric reads differently here): "
                       "install the same version everywhere")
    staged = Staged(Path(req["path"]), Path(req["copy"]) if req["copy"] else None, req["refused"])
    return pool.grade_one(staged, req["folder"], req["loading"], draws, rubric)


# -- in the Dask worker, beside its threads ---------------------------------------------------------------------
class GraderLost(Exception):
    """The grader process died mid-submission (the OOM killer, say)."""


class Graders:
    """A Dask worker's warm grader processes, one per task running at once, kept for the next tasks: torch is
    imported once per worker thread, not once per submission (frontends.cluster.grade_task asks them)."""

    def __init__(self) -> None:
        self.idle: queue.SimpleQueue = queue.SimpleQueue()
        self.started: list[subprocess.Popen | _Forked] = []

    def run(self, req: dict) -> dict:
        try:
            proc = self.idle.get_nowait()
            if proc.poll() is not None:
                raise queue.Empty
        except queue.Empty:
            proc = self._start()
        try:
            proc.stdin.write(json.dumps(req) + "\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
        except OSError:
            line = ""
        if not line:
            proc.kill()
            proc.wait()
            raise GraderLost(f"the grader process died (exit status {proc.returncode})")
        self.idle.put(proc)
        return json.loads(line)

    def _start(self) -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-P", "-m", "grader.frontends.warm_grader"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8")
        self.started.append(proc)
        return proc

    def _fork(self) -> _Forked:
        """A grader process forked from this one, as the local pool's are: torch and its pages shared, and a fork
        server of its own asked of this process's (sandbox.spawn.own_server), so it starts warm in milliseconds."""
        import multiprocessing

        requests, replies = os.pipe(), os.pipe()
        ours = [fd for proc in self.started if isinstance(proc, _Forked) for fd in proc.fds()] + [requests[1], replies[0]]
        proc = multiprocessing.get_context("fork").Process(  # not daemonic: it starts a fork server
            target=_serve_forked, args=(requests[0], replies[1], ours))
        proc.start()
        multiprocessing.process._children.discard(proc)  # type: ignore[attr-defined]  # killed by close, not joined at exit
        os.close(requests[0])
        os.close(replies[1])
        forked = _Forked(proc, open(requests[1], "w", encoding="utf-8"), open(replies[0], encoding="utf-8"))
        self.started.append(forked)
        return forked

    def prestart(self, n: int) -> None:
        """n grader processes started now, idle until a task takes one: forked from this process while it has one
        thread (local:N as the command connects, its fork server started before the rubric was read), else each
        its own interpreter."""
        from grader.sandbox import spawn

        fork = threading.active_count() == 1 and spawn.server_pid() is not None
        for _ in range(n):
            self.idle.put(self._fork() if fork else self._start())

    def close(self) -> None:
        """Kill every grader process started here, idle or mid-submission (a run stopped by Ctrl-C)."""
        while self.started:
            proc = self.started.pop()
            proc.kill()
            proc.wait()


class _Forked:
    """A grader process that Graders forked, with the part of subprocess.Popen's interface that Graders uses."""

    def __init__(self, proc, stdin, stdout):
        self.proc, self.stdin, self.stdout = proc, stdin, stdout

    @property
    def returncode(self) -> int | None:
        return self.proc.exitcode

    def fds(self) -> list[int]:
        return [stream.fileno() for stream in (self.stdin, self.stdout) if not stream.closed]

    def poll(self) -> int | None:
        return self.proc.exitcode

    def kill(self) -> None:
        self.proc.kill()

    def wait(self) -> int | None:
        self.proc.join()
        for stream in (self.stdin, self.stdout):
            with contextlib.suppress(OSError):  # a request left unflushed in the pipe of a grader now dead
                stream.close()
        return self.proc.exitcode


def _serve_forked(requests: int, replies: int, ours: list[int]) -> None:
    """A forked grader process: `main`'s loop on the pipes `requests` and `replies`, with a fork server of its
    own. `ours`: the command's ends of every grader's pipes, its own included, closed here so that each grader sees
    its requests end when the command closes them."""
    for fd in ours:
        os.close(fd)
    from grader.sandbox import spawn

    spawn.own_server()
    sys.exit(main(open(requests, encoding="utf-8"), open(replies, "w", encoding="utf-8")))


graders = Graders()


if __name__ == "__main__":
    sys.exit(main())
