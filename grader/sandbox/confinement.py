"""The grader's side of the walls (the worker's side is sandbox.worker.walls): which walls this machine raises,
a uid per worker slot when root, and killing every process a worker left.

Which walls go up is found once per process by `walls.probe`, run in a throwaway process that tries each for real.
A wall this machine should raise (as root: all of them; as a normal user: what its kernel offers unprivileged) that
does not go up stops grading with `WallsDown`, one line, unless the teacher set ATTENTION_GRADER_ALLOW_WEAK_WALLS=1,
and then the report's first line says "WEAK WALLS". Never a quiet downgrade.

A worker is killed through pidfds held from its fork on, never by a pid that may already name another process
(pid_max is 32768 here). With its own PID namespace, killing it ends every process it started (the kernel kills a
namespace with its first process); as root without one, its uid's `kill(-1)` follows. Without either, its process
tree and the fork server's orphans are walked, and each is signalled only through a pidfd proven to be the process
listed. A uid whose last worker's processes still run (a grader killed with -9) is cleared before its next worker.
"""

from __future__ import annotations

import fcntl
import functools
import json
import os
import pkgutil
import select
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
WALLS = ("net", "mounts", "uid", "pids", "landlock", "seccomp")
WEAK_ENV = "ATTENTION_GRADER_ALLOW_WEAK_WALLS"
PROBE_TRIES = 3
_LOCKS = "/tmp/attention-grader-slots"
_held: dict[int, int] = {}
_next = 0  # the slot this process tries first


class WallsDown(Exception):
    """A wall this machine supports could not go up: grading stops (one line, exit status 2)."""


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
    """(dir, child): the first dir on the way to `path` that is covered or that other users cannot traverse, and
    the child of the last such dir on that way, which is bound back so that the path stays the same (the folders
    between are made afresh, readable, in the cover: a venv in a 0700 folder in /tmp, from `mktemp -d`)."""
    parts = path.split(os.sep)
    first = last = None
    for i in range(2, len(parts)):
        d = os.sep.join(parts[:i])
        if d in covered or any(d.startswith(c + os.sep) for c in covered) or not os.stat(d).st_mode & stat.S_IXOTH:
            first = first or d
            if d in covered or not os.stat(d).st_mode & stat.S_IXOTH:
                last = os.sep.join(parts[: i + 1])
    return (first, last) if first else None


def _readable(roots: list[str], hidden: list[str]) -> list[str]:
    """Folders that together hold everything under `roots` but nothing under `hidden` (Landlock only allows)."""
    out: list[str] = []

    def add(d: str) -> None:
        inside = [h for h in hidden if h == d or h.startswith(d + os.sep)]
        if not inside:
            out.append(d)
        elif d not in inside:  # a folder above a hidden one: its other entries, one by one
            try:
                names = sorted(os.listdir(d))
            except OSError:
                return
            for n in names:
                add(os.path.join(d, n))

    for r in roots:
        add(r)
    return sorted(set(out))


def _secret_dirs() -> list[str]:
    """Every package of the grader but the sandbox: the reference and rubrics, and the exercises too, whose
    planted-bug variants with no bug planted are the reference."""
    import grader

    names = {m.name for m in pkgutil.iter_modules(grader.__path__) if m.ispkg} | {"reference", "rubrics"}
    found = {_package_dir(f"grader.{n}") for n in sorted(names - {"sandbox"})}
    return sorted(os.path.realpath(d) for d in found if d)


@functools.cache
def view_plan() -> dict:
    """What `walls.private_view` mounts and `walls.landlock` allows: computed here once, from stat alone."""
    scratch = [d for d in ("/tmp", "/var/tmp", "/dev/shm") if os.path.isdir(d) and os.stat(d).st_mode & stat.S_IWOTH]
    cover, expose = [], []
    for path in _python_paths():
        found = _blocker(path, scratch + cover)
        if found:
            if found[0] not in scratch + cover:
                cover.append(found[0])
            if found[1] not in expose:
                expose.append(found[1])
    hide = _secret_dirs()
    system = [d for d in ("/usr", "/lib", "/lib64", "/etc", "/dev", "/proc", "/sys") if os.path.isdir(d)]
    read = _readable(sorted(set(_python_paths() + system)), hide)
    return {"cover": cover, "expose": expose, "scratch": scratch, "hide": hide, "scratch_mb": SCRATCH_MB, "read": read}


def expected() -> dict:
    """wall -> None where this machine should raise it, else why it cannot (the report says so)."""
    found = dict.fromkeys(WALLS)
    if os.uname().machine not in ("x86_64", "aarch64"):
        found["seccomp"] = f"no seccomp filter written for {os.uname().machine}"
    if privileged():
        return found
    found["uid"] = "not running as root"
    for path, bad in (("/proc/sys/user/max_user_namespaces", "0"), ("/proc/sys/kernel/unprivileged_userns_clone", "0"),
                      ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1")):
        try:
            with open(path) as f:
                if f.read().strip() == bad:
                    for w in ("net", "mounts", "pids"):
                        found[w] = f"user namespaces are disabled ({path} is {bad})"
        except OSError:
            pass
    return found


def _probe_once(args: dict) -> dict:
    with tempfile.TemporaryDirectory(prefix="attention-grader-probe-") as d:
        done = subprocess.run([sys.executable, "-m", "grader.sandbox.worker.walls", json.dumps({**args, "workdir": d})],
                              capture_output=True, text=True, timeout=120)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    if not isinstance(found, dict) or not set(WALLS) <= set(found):
        raise ValueError(f"the walls probe said {done.stdout[-200:]!r} {done.stderr[-300:]!r}")
    return {k: v if isinstance(v := found[k], (str, type(None))) else "unknown" for k in WALLS}


@functools.cache
def walls() -> dict:
    """wall -> None where it goes up around every worker, else why not. Raises WallsDown when one this machine
    should raise does not (a failed probe is retried first), unless weak walls were allowed (`weak()`)."""
    want = expected()
    args = {"view": view_plan(), "uid": PROBE_UID, "readable": _python_paths(), "try": [w for w in WALLS if want[w] is None]}
    error = ""
    for _ in range(PROBE_TRIES):
        try:
            found = _probe_once(args)
            break
        except (OSError, subprocess.SubprocessError, ValueError, IndexError) as e:
            error = str(e) or type(e).__name__
    else:
        found = dict.fromkeys(WALLS, f"the walls probe failed ({error[:200]})")
    found = {w: want[w] or found[w] for w in WALLS}
    down = {w: found[w] for w in WALLS if want[w] is None and found[w] is not None}
    if down and os.environ.get(WEAK_ENV) != "1":
        first = next(iter(down))
        raise WallsDown(f"the sandbox's {', '.join(down)} wall{'s' if len(down) > 1 else ''} could not go up "
                        f"({down[first]}); grading stopped. Set {WEAK_ENV}=1 to grade without "
                        f"{'them' if len(down) > 1 else 'it'} (the report will say WEAK WALLS)")
    return found


def weak() -> list[str]:
    """The walls this machine should raise that are down (graded anyway: ATTENTION_GRADER_ALLOW_WEAK_WALLS=1)."""
    want, up = expected(), walls()
    return [w for w in WALLS if want[w] is None and up.get(w, "unknown") is not None]


def uid_wall() -> str | None:
    """None when workers can run under their own uid, else why not (the report says so)."""
    return walls()["uid"]


def worker_walls(uid: int | None) -> dict:
    """The part of a worker's limits that says which walls it raises, and how."""
    up = {w: walls().get(w, "unknown") is None for w in WALLS}
    return {"net": up["net"], "view": view_plan() if up["mounts"] else None, "uid": uid, "pids": up["pids"],
            "userns": not privileged() and (up["net"] or up["mounts"] or up["pids"]),
            "landlock": view_plan() if up["landlock"] else None, "seccomp": up["seccomp"]}


def environment() -> list[str]:
    """Which walls were up around the submission's worker, in words (the report's environment lines)."""
    up = {w: walls().get(w, "unknown") for w in WALLS}
    lines = [f"WEAK WALLS ({WEAK_ENV}=1): the {', '.join(w)} wall(s) this machine should raise were down"] if (w := weak()) else []
    lines.append("run-time deadlines (the worker's own time, not time spent waiting for a CPU), address-space, "
                 "CPU-time and output limits")
    ns = "own user namespace" if not privileged() else "own namespace"
    said = {  # wall: (the line when it was up, the line when it was down, with why)
        "mounts": (f"a private file system view ({ns}: its own size-capped working folder and /tmp, the reference hidden)",
                   "a private temporary working folder, but no private file system view ({})"),
        "net": (f"no network (own network namespace{', in its ' + ns if not privileged() else ''})", "network NOT blocked ({})"),
        "pids": ("its own PID namespace and /proc: no other process is visible, and every process it starts dies with it",
                 "other processes visible, no PID namespace ({})"),
        "landlock": ("Landlock: it reads only Python's files and writes only its working folder", "no Landlock ({})"),
        "seccomp": ("seccomp: no ptrace, mounts, namespaces or new sessions", "no seccomp filter ({})"),
        "uid": ("its own uid per worker, with a process cap; every process it starts is killed afterwards",
                "no uid of its own ({}): leftover processes are killed by process tree"),
    }
    lines += [good if up[wall] is None else bad.format(up[wall]) for wall, (good, bad) in said.items()]
    return lines


def torch_dir() -> str:
    return os.path.dirname(find_spec("torch").origin)


def acquire(workdir: str) -> int | None:
    """A free uid for one worker (held by a lock file until `release`); None when not root."""
    if uid_wall() is not None:
        return None
    os.makedirs(_LOCKS, mode=0o700, exist_ok=True)
    global _next
    for i in range(SLOTS):  # round the slots: the last worker's namespace may still be dying in its own
        uid = FIRST_UID + (_next + i) % SLOTS
        fd = os.open(os.path.join(_LOCKS, str(uid)), os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        _held[uid] = fd
        _next = (uid - FIRST_UID + 1) % SLOTS
        if _running_as(uid):  # a previous grader killed with -9 may have left something behind
            _kill_uid(uid)
        for root, dirs, files in os.walk(workdir):
            for name in [root] + [os.path.join(root, n) for n in dirs + files]:
                os.chown(name, uid, uid)
        return uid
    raise RuntimeError("no free worker slot")


def release(uid: int | None) -> None:
    fd = _held.pop(uid, None) if uid is not None else None
    if fd is not None:
        os.close(fd)


def _running_as(uid: int) -> bool:
    """Whether any process runs as `uid` (its real uid, in /proc/PID/status: /proc/PID itself is root's once a
    process has changed its uid). A look costs a few ms; the fork that `_kill_uid` takes, 25 ms and more."""
    mark = f"\nUid:\t{uid}\t".encode()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if mark in read_proc(f"/proc/{name}/status"):
                    return True
            except OSError:
                pass
    return False


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


# -- processes, by pidfd ---------------------------------------------------------------------------------------------
def pidfd_of_child(pid: int, sentinel: int | None) -> int | None:
    """A pidfd for a worker the fork server just forked, or None when it is already gone. The fork server writes
    to `sentinel` once it has reaped the worker: while nothing is there, `pid` is still the worker's."""
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return None
    if sentinel is not None and select.select([sentinel], [], [], 0)[0]:
        os.close(fd)
        return None
    return fd


def signal_pidfd(fd: int | None, sig: int = signal.SIGKILL) -> None:
    if fd is None:
        return
    try:
        signal.pidfd_send_signal(fd, sig)
    except (ProcessLookupError, PermissionError, OSError):
        pass


def read_proc(path: str) -> bytes:
    """A /proc file's first 4 KiB; os.read, not open(): the deadline clock reads several for every call."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, 4096)
    finally:
        os.close(fd)


def proc_stat(pid: int) -> list[bytes]:
    """The fields of /proc/PID/stat from the third (state) on: the command name before them may hold anything."""
    return read_proc(f"/proc/{pid}/stat").rsplit(b")", 1)[1].split()


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, start time) of a process; pid and start time together name one process for good."""
    try:
        fields = proc_stat(pid)
        return fields[0].decode(), int(fields[1]), int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def _tree() -> dict[int, list[tuple[int, int]]]:
    """ppid -> live (not zombie) children as (pid, start time), from /proc."""
    tree: dict[int, list[tuple[int, int]]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (st := _stat(int(name))) and st[0] != "Z":
            tree.setdefault(st[1], []).append((int(name), st[2]))
    return tree


def _kill_listed(pid: int, start: int, ppid: int) -> None:
    """SIGKILL the process listed as (pid, start) under ppid, through a pidfd proven to be that process."""
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return
    try:
        st = _stat(pid)
        if st is not None and st[2] == start and st[1] == ppid:
            signal_pidfd(fd)
    finally:
        os.close(fd)


def kill(pidfd: int | None, pid: int, uid: int | None, server: int | None = None, live: frozenset = frozenset(),
         pids_wall: bool = False) -> None:
    """Kill a worker and everything it started. With a PID namespace of its own, killing it kills the namespace
    (PID 1 dies with the worker, its relay, and the kernel kills the rest); with a uid of its own, `kill(-1)` as
    that uid follows; without either, its process tree and every orphan its fork server (`server`, a child
    subreaper) took in that is not a `live` worker, repeated until none is left."""
    signal_pidfd(pidfd)
    if pids_wall:
        return
    if uid is not None:
        _kill_uid(uid)
        return
    for _ in range(100):
        tree = _tree()
        # its children by pid only while it lives (then the pid is its own); a dead worker's went to the server
        alive = pidfd is not None and not select.select([pidfd], [], [], 0)[0]
        todo = [(c, s, pid) for c, s in tree.get(pid, [])] if alive else []
        if server:
            todo += [(c, s, server) for c, s in tree.get(server, []) if c not in live and c != pid]
        victims = []
        while todo:
            victims.append(v := todo.pop())
            todo += [(c, s, v[0]) for c, s in tree.get(v[0], [])]
        if not victims:
            return
        for v in victims:
            _kill_listed(*v)
