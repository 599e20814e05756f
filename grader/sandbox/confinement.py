"""The grader's side of the walls (the worker's side is sandbox.worker.walls): a uid per worker slot when root, and killing every process a worker left.

Process groups are not enough (a `setsid()` grandchild leaves the group), so as root each worker runs under a
uid of its own and `kill(-1, SIGKILL)` from that uid removes everything it started, repeated until nothing is
left. Without root the worker's process group and session are killed: fewer walls, said in the report.
"""

from __future__ import annotations

import fcntl
import functools
import json
import os
import signal
import stat
import subprocess
import sys
import sysconfig
import tempfile
from importlib.util import find_spec

FIRST_UID = 61000
SLOTS = 256
PROBE_UID = FIRST_UID + SLOTS  # used only by the probe, which is alone under it
SCRATCH_MB = 64  # a worker's private /tmp and working folder (tmpfs: memory, so capped)
_LOCKS = "/tmp/attention-grader-slots"
_held: dict[int, int] = {}


def privileged() -> bool:
    return os.geteuid() == 0


def _python_paths() -> list[str]:
    """What a worker must be able to read to import modules it has not imported yet (stdlib, site-packages)."""
    paths = sysconfig.get_paths()
    found = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")} | {os.path.dirname(torch_dir())}
    return sorted(os.path.realpath(p) for p in found if os.path.isdir(p))


def _package_dir(name: str) -> str | None:
    spec = find_spec(name)
    return os.path.dirname(spec.origin) if spec and spec.origin else None


def _blocker(path: str, covered: list[str]) -> tuple[str, str] | None:
    """(dir, child): the first dir on the way to `path` that is covered or that other users cannot traverse,
    and its child on that way, which is bound back so that the path stays the same."""
    parts = path.split(os.sep)
    for i in range(2, len(parts)):
        d = os.sep.join(parts[:i])
        if d in covered or not os.stat(d).st_mode & stat.S_IXOTH:
            return d, os.sep.join(parts[: i + 1])
    return None


@functools.cache
def view_plan() -> dict:
    """What `walls.private_view` mounts: computed here once, from stat alone."""
    scratch = [d for d in ("/tmp", "/var/tmp", "/dev/shm") if os.path.isdir(d) and os.stat(d).st_mode & stat.S_IWOTH]
    cover, expose = [], []
    for path in _python_paths():
        found = _blocker(path, scratch + cover)
        if found:
            if found[0] not in scratch + cover:
                cover.append(found[0])
            if found[1] not in expose:
                expose.append(found[1])
    hide = [d for d in (_package_dir("grader.reference"), _package_dir("grader.rubrics")) if d]
    return {"cover": cover, "expose": expose, "scratch": scratch, "hide": hide, "scratch_mb": SCRATCH_MB}


@functools.cache
def walls() -> dict:
    """{"net", "mounts", "uid"}: None where that wall can go up on this machine, else why not. As root this runs
    `walls.probe` once in a throwaway process, which tries each wall for real."""
    if not privileged():
        return dict.fromkeys(("net", "mounts", "uid"), "not running as root")
    args = {"view": view_plan(), "uid": PROBE_UID, "readable": _python_paths()}
    with tempfile.TemporaryDirectory(prefix="attention-grader-probe-") as d:
        try:
            done = subprocess.run([sys.executable, "-m", "grader.sandbox.worker.walls", json.dumps({**args, "workdir": d})],
                                  capture_output=True, text=True, timeout=60)
            found = json.loads(done.stdout.strip().splitlines()[-1])
        except (OSError, subprocess.SubprocessError, ValueError, IndexError):
            return dict.fromkeys(("net", "mounts", "uid"), "the walls probe failed")
    return {k: v if isinstance(v := found.get(k), (str, type(None))) else "unknown" for k in ("net", "mounts", "uid")}


def uid_wall() -> str | None:
    """None when workers can run under their own uid, else why not (the report says so)."""
    return walls()["uid"]


def worker_walls(uid: int | None) -> dict:
    """The part of a worker's limits that says which privileged walls it raises."""
    return {"net": walls()["net"] is None, "view": view_plan() if walls()["mounts"] is None else None, "uid": uid}


def torch_dir() -> str:
    return os.path.dirname(find_spec("torch").origin)


def acquire(workdir: str) -> int | None:
    """A free uid for one worker (held by a lock file until `release`); None when not root."""
    if uid_wall() is not None:
        return None
    os.makedirs(_LOCKS, mode=0o700, exist_ok=True)
    for uid in range(FIRST_UID, FIRST_UID + SLOTS):
        fd = os.open(os.path.join(_LOCKS, str(uid)), os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        _held[uid] = fd
        _kill_uid(uid)  # a previous grader killed with -9 may have left something behind
        for root, dirs, files in os.walk(workdir):
            for name in [root] + [os.path.join(root, n) for n in dirs + files]:
                os.chown(name, uid, uid)
        return uid
    raise RuntimeError("no free worker slot")


def release(uid: int | None) -> None:
    fd = _held.pop(uid, None) if uid is not None else None
    if fd is not None:
        os.close(fd)


def _kill_uid(uid: int) -> None:
    pid = os.fork()
    if pid == 0:
        try:
            os.setgid(uid)
            os.setuid(uid)
            for _ in range(1000):
                os.kill(-1, signal.SIGKILL)  # every process of this uid but this one
        except ProcessLookupError:
            os._exit(0)
        except BaseException:
            os._exit(1)
        os._exit(2)
    os.waitpid(pid, 0)


def _children() -> dict[int, list[int]]:
    """ppid -> live (not zombie) children, from /proc."""
    tree: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                tree.setdefault(int(fields[1]), []).append(int(name))
    return tree


def _below(tree: dict[int, list[int]], roots: list[int]) -> list[int]:
    found, todo = [], list(roots)
    while todo:
        found.append(pid := todo.pop())
        todo += tree.get(pid, [])
    return found


def kill(pid: int, uid: int | None, server: int | None = None, live: frozenset = frozenset()) -> None:
    """Kill a worker and everything it started. With a uid of its own, `kill(-1)` as that uid; without one, its
    process group, its process tree, and every orphan its fork server (`server`, a child subreaper) took in that
    is not a `live` worker, repeated until none is left (a process can fork while it is being killed)."""
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
        except (ProcessLookupError, PermissionError):
            pass
    if uid is not None:
        _kill_uid(uid)
        return
    for _ in range(100):
        tree = _children()
        orphans = [c for c in tree.get(server, []) if c not in live] if server else []
        victims = [v for v in _below(tree, tree.get(pid, []) + orphans) if v != pid]
        if not victims:
            return
        for v in victims:
            try:
                os.kill(v, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
