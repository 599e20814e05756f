"""Starting workers from the fork server. Importing this module costs nothing: the grader can start the fork
server before it imports torch itself (see warm_up), and name the workers' target without importing the worker's
code (which sets torch threads and becomes a subreaper) into its own process. A worker unpickles its process
object, and so imports this module (preloaded, like the worker's code), not one that imports pydantic."""

import atexit
import gc
import io
import multiprocessing
import multiprocessing.forkserver
import os
import select
import signal
import socket
import sys
from multiprocessing import context as _context, popen_forkserver, reduction, util
from typing import Any

_preload = ["grader.sandbox.worker.preload"]


def context():
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(_preload)
    return ctx


def warm_up(meta: bool = False) -> None:
    """Start the fork server now (call it before anything secret is loaded, and before torch is imported here).

    From a process that holds only the standard library, installed packages and the grader's front end (`_clean`:
    `attention-grader check`, `replay`), the server is a fork of this process taken right after it imports torch:
    server, workers and grader then share torch's pages, and torch is imported once (a batch's graders, which hold a
    rubric, each fork their own from the batch command's: `own_server`). From any other process (pytest, Jupyter)
    it is a fresh interpreter, whose `import torch` runs beside this process's own.

    meta: also import torch's meta kernels there, for a server that will fork many workers. Without it, one check
    is not kept waiting for them: its worker forks a twin that imports them (see sandbox.worker.twin)."""
    if meta and "grader.sandbox.worker.preload_meta" not in _preload:
        _preload.append("grader.sandbox.worker.preload_meta")
    hold()
    from grader.sandbox import confinement

    confinement.start_probe()  # beside this process's import of torch (or the fresh server's)
    context()
    if not _adopted_alive() and not _fork_here():
        multiprocessing.forkserver.ensure_running()
    _hold_server()
    if not _stopping:  # multiprocessing's exit hook, not atexit: a pool's grader process runs only that one
        _stopping.append(util.Finalize(None, stop_server, exitpriority=-100))


_SECRET = ("grader.reference", "grader.rubrics", "grader.grading.", "grader.checks", "grader.exercises")

# Environment variables whose values no worker may hold: the course secret (checks.draws). A process started with one
# is not _clean (a fork of it carries its start-up environment), and `hold` takes it out of os.environ before a
# fresh fork server could inherit it; the grader reads it from HELD.
KEPT_OUT = ("ATTENTION_GRADER_SECRET",)
HELD: dict[str, str] = {}


def hold() -> None:
    for name in KEPT_OUT:
        if name in os.environ:
            HELD[name] = os.environ.pop(name)


def _started_with_kept_out() -> bool:
    try:
        with open("/proc/self/environ", "rb") as f:
            names = {entry.split(b"=", 1)[0] for entry in f.read().split(b"\0")}
    except OSError:
        return True  # cannot tell: assume it was
    return bool(HELD) or any(name.encode() in names for name in KEPT_OUT)


def _clean() -> bool:
    """Whether this process holds nothing a worker may not see, and nothing a fresh interpreter would not have: one
    thread, no tracer, not pytest (its output capture, logging and warning filters), and no code but the standard
    library's, the installed packages' and the grader's own front ends and sandbox: no reference, rubric or check,
    and no conftest, script or `-c` of a teacher's."""
    import site
    import sysconfig
    import threading

    if threading.active_count() != 1 or "_pytest" in sys.modules or sys.gettrace() or sys.getprofile():
        return False
    if _started_with_kept_out():
        return False
    paths = sysconfig.get_paths()
    installed = [paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib", "scripts")] + site.getsitepackages()
    installed += [site.getusersitepackages()] if site.ENABLE_USER_SITE else []  # pip install --user
    places = tuple(os.path.join(p, "") for p in installed)
    ours = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "")  # the grader package
    for name, module in list(sys.modules.items()):
        spec = getattr(module, "__spec__", None)
        if name in ("__main__", "__mp_main__"):  # a console script or `python -m grader...` (and its alias)
            file = getattr(module, "__file__", None) or ""
            if not (getattr(spec, "name", "").startswith("grader.") or file.startswith(places)):
                return False
        elif name.startswith(_SECRET):
            return False
        elif spec is not None and spec.has_location and not (  # no location: built in, frozen, made by code
                spec.origin.startswith(places) or (name.split(".")[0] == "grader" and spec.origin.startswith(ours))):
            return False
    return True


def _server() -> Any:
    """multiprocessing's own fork server client: typed Any, since the attributes used here are private ones typeshed does not know."""
    return multiprocessing.forkserver._forkserver


def _fork_here() -> bool:
    """Start the fork server as a fork of this process, once torch is imported here: the server, its workers and
    this process then share torch's pages. Only from a process that is `_clean`; otherwise (False) the caller
    starts a fresh interpreter as multiprocessing does."""
    server = _server()
    if server._forkserver_pid is not None or not _clean():
        return False
    import torch  # noqa: F401

    if not _clean():
        return False
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()
    listener, address = _listening()
    with listener:
        alive_r, alive_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        gc.freeze()  # the server's collections then leave the pages it shares with this process alone
        pid = os.fork()
        if pid == 0:
            _serve_forks(listener.fileno(), alive_r)
        os.close(alive_r)
    server._forkserver_address, server._forkserver_alive_fd, server._forkserver_pid = address, alive_w, pid
    _warm.add(pid)
    return True


def _listening() -> tuple[socket.socket, str]:
    """A listening socket for a new fork server, and its address, made as multiprocessing makes its own."""
    from multiprocessing import connection

    listener = socket.socket(socket.AF_UNIX)
    address = connection.arbitrary_address("AF_UNIX")  # type: ignore[attr-defined]
    listener.bind(address)
    if not util.is_abstract_socket_namespace(address):
        os.chmod(address, 0o600)
    listener.listen()
    return listener, address


def _serve_forks(listener: int, alive_r: int) -> None:
    """The fork server's life, in the child of `_fork_here`: this process's exit hooks, signal handlers and files
    dropped, as an exec would (and Python's start-up after it) drop them."""
    try:
        atexit._clear()
        util._finalizer_registry.clear()  # type: ignore[attr-defined]
        for sig in signal.valid_signals():
            if callable(signal.getsignal(sig)):
                signal.signal(sig, signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL)
        from grader.sandbox.worker.walls import linux

        linux.close_fds({0, 1, 2, listener, alive_r})
        linux.become_subreaper()  # a fork's: not inherited, and preload's import (which sets it) may be done
        multiprocessing.forkserver.main(listener, alive_r, _preload)
    finally:
        os._exit(0)


_stopping: list = []
_server_fd: dict[int, int] = {}  # the fork server's pid -> a pidfd for it, held from its start
_warm: set[int] = set()  # fork servers forked by _fork_here, here or in the process this one was forked from
_adopted: set[int] = set()  # fork servers that are not this process's children: alive while their pidfd says so


def _adopted_alive() -> bool:
    """Whether the fork server is one this process did not start and it still runs; one that died is forgotten."""
    pid = server_pid()
    if pid not in _adopted:
        return False
    fd = _server_fd.get(pid)
    if fd is not None and not select.select([fd], [], [], 0)[0]:
        return True
    forget_server()
    return False


def _hold_server() -> None:
    """A pidfd for the fork server, opened while it is our unreaped child (so the pid is its own)."""
    pid = server_pid()
    if pid is not None and pid not in _server_fd:  # a new one: multiprocessing restarts a server that died
        for fd in _server_fd.values():
            os.close(fd)
        _server_fd.clear()
        _server_fd[pid] = os.pidfd_open(pid)


def own_server() -> None:
    """In a process forked from a grader (a batch's grader process): the fork server it knows of is its parent's,
    which it may neither use (that server's workers report to the parent) nor stop. When that one is a warm fork
    (`_fork_here`, from a clean batch command), this process's own is a fork of it, asked of it as a worker is:
    torch, the meta kernels and their pages shared, started in milliseconds. Otherwise warm_up starts one."""
    server = _server()
    own = None
    if server._forkserver_pid in _warm:
        _adopted.add(server._forkserver_pid)
        listener, address = _listening()
        alive_r, alive_w = os.pipe()
        try:
            with listener:
                proc = _WorkerProcess(target=_serve_inherited, daemon=True)
                proc.fds = [listener.fileno(), alive_r]
                proc.start()
                assert proc.pid is not None  # started
                own = (address, alive_w, proc.pid)
            multiprocessing.process._children.discard(proc)  # type: ignore[attr-defined]  # stopped by stop_server, not joined at exit
        except (OSError, EOFError):  # the batch command's server is gone: a fresh interpreter, as anywhere else
            os.close(alive_w)
        finally:
            os.close(alive_r)
    forget_server()
    _stopping.clear()  # the parent's exit hook: multiprocessing dropped it in this process; warm_up adds ours
    if own is not None:
        server._forkserver_address, server._forkserver_alive_fd, server._forkserver_pid = own
        _adopted.add(own[2])
        _hold_server()


def _serve_inherited() -> None:
    fds = multiprocessing.forkserver.get_inherited_fds()
    assert fds is not None, "started as a _WorkerProcess, with its fds"
    _serve_forks(*fds)


def forget_server() -> None:
    """Drop (without stopping it) the fork server this process knows of: its parent's, or one that died."""
    server = _server()  # private, like server_pid: no public way to reset it
    if server._forkserver_alive_fd is not None:
        os.close(server._forkserver_alive_fd)  # our copy only: the parent's keeps its server alive
    server._forkserver_pid = server._forkserver_address = server._forkserver_alive_fd = None
    for fd in _server_fd.values():
        os.close(fd)
    _server_fd.clear()


def server_pid() -> int | None:
    return getattr(_server(), "_forkserver_pid", None)  # no public accessor


def stop_server() -> None:
    """End the fork server with this process: left alone it would outlive the command, still importing torch
    or waiting to notice that its parent is gone. Then multiprocessing's resource tracker, started with the server
    in this process: it would outlive the command by a moment, holding its stdout and stderr open."""
    pid = server_pid()
    fd = _server_fd.pop(pid, None) if pid is not None else None
    if pid is None or fd is None:  # never started here, or already stopped: its pid may be another process's by now
        return
    try:
        signal.pidfd_send_signal(fd, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError, OSError):
        pass
    finally:
        os.close(fd)
    _stop_tracker()


def _stop_tracker() -> None:
    from multiprocessing import resource_tracker

    tracker: Any = resource_tracker._resource_tracker  # private: no public way to stop it (3.11 to 3.13)
    try:
        tracker._stop()  # our copy of its pipe closed; the wait fails where a parent started it (a batch's grader)
    except (ChildProcessError, OSError):
        pass


def start(sock, out_path: str, limits: dict) -> _context.ForkServerProcess:
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
        self._fds += getattr(process_obj, "fds", [])  # the child finds them in forkserver.get_inherited_fds()
        self.sentinel, w = _connect(self._fds)
        _parent_w = os.dup(w)
        self.finalizer = util.Finalize(self, util.close_fds, (_parent_w, self.sentinel))
        with open(w, "wb", closefd=True) as f:
            f.write(buf.getbuffer())
        self.pid = multiprocessing.forkserver.read_signed(self.sentinel)


def _connect(fds: list[int]) -> tuple[int, int]:
    """multiprocessing.forkserver.connect_to_new_process, also for a server this process did not start, which its
    ensure_running (a waitpid) cannot check: (sentinel, the pipe the process object is written to)."""
    if not _adopted_alive():
        return multiprocessing.forkserver.connect_to_new_process(fds)
    server = _server()
    adopted: Any = _Adopted()  # given the server's private address and fd
    adopted._forkserver_address, adopted._forkserver_alive_fd = server._forkserver_address, server._forkserver_alive_fd
    try:
        return adopted.connect_to_new_process(fds)
    except OSError:  # it is just gone: a fresh interpreter, as anywhere else
        forget_server()
        return multiprocessing.forkserver.connect_to_new_process(fds)


class _Adopted(multiprocessing.forkserver.ForkServer):
    """multiprocessing's client side of a fork server, for one that _adopted_alive has checked by its pidfd."""

    def ensure_running(self) -> None:
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()  # all the stock one does for a server that runs, but its waitpid


class _WorkerProcess(_context.ForkServerProcess):
    fds: list[int]  # set before start(): handed to the child, which finds them in forkserver.get_inherited_fds()

    @staticmethod
    def _Popen(process_obj):
        return _Popen(process_obj)
