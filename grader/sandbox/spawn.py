"""Starting workers from the fork server. Importing this module costs nothing: the grader can start the fork
server before it imports torch itself, and name the workers' target without importing the worker's code (which
sets torch threads and becomes a subreaper) into its own process. A worker unpickles its process object, and so
imports this module (preloaded, like the worker's code), not one that imports pydantic."""

import io
import multiprocessing
import multiprocessing.forkserver
import os
import signal
from multiprocessing import context as _context
from multiprocessing import popen_forkserver, reduction, util

_preload = ["grader.sandbox.worker.preload"]


def context():
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(_preload)
    return ctx


def warm_up(meta: bool = False) -> None:
    """Start the fork server now, so that its `import torch` overlaps the grader's own (call it before that).

    meta: also import torch's meta kernels there, for a server that will fork many workers. Without it, one check
    is not kept waiting for them: its worker forks a twin that imports them (see sandbox.worker.serve)."""
    if meta and "grader.sandbox.worker.preload_meta" not in _preload:
        _preload.append("grader.sandbox.worker.preload_meta")
    context()
    multiprocessing.forkserver.ensure_running()
    _hold_server()
    if not _stopping:  # multiprocessing's exit hook, not atexit: a pool's grader process runs only that one
        _stopping.append(util.Finalize(None, stop_server, exitpriority=-100))


_stopping: list = []
_server_fd: dict[int, int] = {}  # the fork server's pid -> a pidfd for it, held from its start


def _hold_server() -> None:
    """A pidfd for the fork server, opened while it is our unreaped child (so the pid is its own)."""
    pid = server_pid()
    if pid is not None and pid not in _server_fd:  # a new one: multiprocessing restarts a server that died
        for fd in _server_fd.values():
            os.close(fd)
        _server_fd.clear()
        _server_fd[pid] = os.pidfd_open(pid)


def forget_server() -> None:
    """In a process forked from a grader (a batch's grader process): the fork server it knows of is its parent's,
    which it may neither use (that server's workers report to the parent) nor stop. It will start its own."""
    server = multiprocessing.forkserver._forkserver  # private, like server_pid: no public way to reset it
    if server._forkserver_alive_fd is not None:
        os.close(server._forkserver_alive_fd)  # our copy only: the parent's keeps its server alive
    server._forkserver_pid = server._forkserver_address = server._forkserver_alive_fd = None
    for fd in _server_fd.values():
        os.close(fd)
    _server_fd.clear()
    _stopping.clear()


def server_pid() -> int | None:
    return getattr(multiprocessing.forkserver._forkserver, "_forkserver_pid", None)  # no public accessor


def stop_server() -> None:
    """End the fork server with this process: left alone it would outlive the command, still importing torch
    or waiting to notice that its parent is gone."""
    pid = server_pid()
    fd = _server_fd.pop(pid, None)
    if fd is None:  # never started here, or already stopped: its pid may be another process's by now
        return
    try:
        signal.pidfd_send_signal(fd, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError, OSError):
        pass
    finally:
        os.close(fd)


def start(sock, out_path: str, limits: dict) -> multiprocessing.Process:
    """A worker forked from the fork server, serving frames on `sock`."""
    context()
    proc = _WorkerProcess(target=run, args=(sock, out_path, limits), daemon=True)
    proc.start()
    _hold_server()
    return proc


def run(sock, out_path: str, limits: dict) -> None:
    from grader.sandbox.worker import serve  # already imported by the fork server's preload

    serve.main(sock, out_path, limits)


class _Popen(popen_forkserver.Popen):
    """multiprocessing's fork-server launch, minus the preparation data: the stock one re-imports the grader's
    __main__ in the worker and hands it the grader's argv and authkey."""

    def _launch(self, process_obj):
        prep = {"name": "attention-grader-worker", "authkey": os.urandom(32), "sys_argv": ["submission"]}
        buf = io.BytesIO()
        _context.set_spawning_popen(self)
        try:
            reduction.dump(prep, buf)
            reduction.dump(process_obj, buf)
        finally:
            _context.set_spawning_popen(None)
        self.sentinel, w = multiprocessing.forkserver.connect_to_new_process(self._fds)
        _parent_w = os.dup(w)
        self.finalizer = util.Finalize(self, util.close_fds, (_parent_w, self.sentinel))
        with open(w, "wb", closefd=True) as f:
            f.write(buf.getbuffer())
        self.pid = multiprocessing.forkserver.read_signed(self.sentinel)


class _WorkerProcess(_context.ForkServerProcess):
    @staticmethod
    def _Popen(process_obj):
        return _Popen(process_obj)
