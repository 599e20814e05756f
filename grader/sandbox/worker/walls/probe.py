"""Which walls this machine allows, found by raising each for real in a throwaway process (`python -m
grader.sandbox.worker.walls`, run by `confinement.walls`), in the order a worker raises them: the grader then
knows which walls to expect around every worker, and says so in the report."""

from __future__ import annotations

import ctypes
import errno
import json
import os
import socket
import traceback
from collections.abc import Callable

from grader.sandbox.worker.walls import landlock, linux, namespaces, pid_namespace, seccomp
from grader.sandbox.worker.walls.linux import CLONE_NEWNS


def probe(view: dict, uid: int, readable: list[str], workdir: str, **kw) -> dict:
    """Which walls this machine allows, tried for real in this throwaway process, in the worker's order: a user
    namespace (not root), a network namespace, a PID namespace with its own /proc, the private view, Python's
    files read as `uid` (root), Landlock, seccomp. Each value is None (possible) or why not."""
    found: dict[str, str | None] = {"net": None, "mounts": None, "uid": None, "pids": None, "landlock": None, "seccomp": None}
    root = os.geteuid() == 0
    if not root:
        found["uid"] = "not running as root"
        try:
            namespaces.own_user_namespace()
        except OSError as e:
            found.update(net=f"no user namespace: {e}", mounts=f"no user namespace: {e}", pids=f"no user namespace: {e}")
    if found["net"] is None:
        try:
            namespaces.unshare_net()
            with socket.socket() as s:
                s.settimeout(2)
                if s.connect_ex(("127.0.0.1", 9)) in (0, errno.ECONNREFUSED):
                    found["net"] = "the loopback interface is still reachable"
        except OSError as e:
            found["net"] = str(e)
    if found["pids"] is None:
        try:
            pid_namespace.unshare_pids()
        except OSError as e:
            found["pids"] = str(e)
    if found["mounts"] is None:
        try:
            namespaces.private_view(view, workdir, uid if root else None)
        except OSError as e:
            found["mounts"] = str(e)
    if found["pids"] is not None:
        found.update(_probe_rest(uid, readable, workdir, root))
        return found
    # this process stays outside the new namespace and its /proc: its child is PID 1 there, as a worker's is
    said = in_child(lambda: _probe_pid_one(uid, readable, workdir, root))
    try:
        found.update(json.loads(said))
    except ValueError:
        found.update(pids="the PID namespace's first process died", uid=found["uid"] or "the probe died",
                     landlock="the probe died", seccomp="the probe died")
    return found


def in_child(work: Callable[[], dict]) -> bytes:
    """What `work` returns, as JSON, worked out in a forked child, so that the walls it raises stay there (b"" if the
    child died first; what stopped it on stderr)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.write(w, json.dumps(work()).encode())
        except BaseException:  # noqa: BLE001 - whatever stopped it, on stderr for the grader's retry to say
            traceback.print_exc()
        finally:
            os._exit(0)
    os.close(w)
    said = b""
    while chunk := os.read(r, 4096):
        said += chunk
    os.waitpid(pid, 0)
    return said


def _probe_pid_one(uid: int, readable: list[str], workdir: str, root: bool) -> dict:
    """As PID 1 of the new PID namespace: its own /proc, then the uid and Landlock parts."""
    part: dict[str, str | None] = {"pids": None}
    try:
        linux.mount_proc()
        seen = [n for n in os.listdir("/proc") if n.isdigit()]
        if not (os.getpid() == 1 and seen == ["1"] and os.readlink("/proc/self") == "1"):
            part["pids"] = f"other processes still visible: {seen[:3]}"
    except OSError as e:
        part["pids"] = str(e)
    part.update(_probe_rest(uid, readable, workdir, root))
    return part


def _probe_rest(uid: int, readable: list[str], workdir: str, root: bool) -> dict:
    """The uid and Landlock parts of the probe."""
    part = {}
    if root:
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            for path in readable:
                try:
                    os.listdir(path)
                except OSError:
                    part["uid"] = f"Python's files under {path} are not readable by other users"
                    break
        except OSError as e:  # e.g. a container without CAP_SETUID
            part["uid"] = str(e)
    try:
        landlock.restrict(readable, [workdir])
        os.listdir(readable[0])
        try:
            os.listdir("/")
            part["landlock"] = "Landlock did not restrict reading"
        except PermissionError:
            pass
    except OSError as e:
        part["landlock"] = str(e)
    try:
        seccomp.install()
        if linux.libc.unshare(CLONE_NEWNS) == 0 or ctypes.get_errno() != errno.EPERM:
            part["seccomp"] = "the filter did not refuse unshare"
    except OSError as e:
        part["seccomp"] = str(e)
    return part
