"""The walls around a worker process: what it may use of the machine.

Runs inside the worker before any student code. As root every wall is up; as an ordinary user (a student's
laptop) the ones that need privileges are skipped. Which walls this machine allows is found once by `probe`,
run as a separate process by `walls_host`, so that the report can say which were up.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import resource
import signal
import socket
import sys

PR_SET_CHILD_SUBREAPER = 36
CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 4096, 16384, 1 << 18
_libc = ctypes.CDLL(None, use_errno=True)
_KEEP_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ")


def become_subreaper() -> bool:
    return _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _unshare_net() -> None:
    _check(_libc.unshare(CLONE_NEWNET), "unshare(CLONE_NEWNET)")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = lambda s: s.encode() if s is not None else None  # noqa: E731
    _check(_libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)), f"mount {target}")


def private_view(view: dict, workdir: str, uid: int | None) -> None:
    """A private mount namespace in which the worker's uid can read Python and nothing it should not see.

    `view` (from walls_host.view_plan): `cover` dirs that other users cannot traverse (e.g. /root, mode 700,
    holding pyenv's Python) become empty tmpfs with only the `expose` paths bound back at the same place;
    `scratch` (/tmp, /var/tmp, /dev/shm) becomes one private size-capped tmpfs, so a worker's files vanish with
    it; `hide` (the reference) becomes an empty read-only tmpfs. The working folder is a fresh tmpfs too, with
    the submission's copied folder (`src`) bound back; output goes through descriptors opened before this.
    """
    _check(_libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing mounted here leaks to the host
    src = os.path.join(workdir, "src")
    keep = {p: os.open(p, os.O_PATH) for p in view["expose"]}  # opened in this namespace, before being covered
    if os.path.isdir(src):
        keep[src] = os.open(src, os.O_PATH)
    size = f"size={view['scratch_mb']}m"
    for d in view["cover"]:
        _mount("tmpfs", d, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k")
    if view["scratch"]:
        first, *rest = view["scratch"]
        _mount("tmpfs", first, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,{size}")
        for d in rest:
            _mount(first, d, None, MS_BIND)
    os.makedirs(workdir, exist_ok=True)
    owner = f",uid={uid},gid={uid}" if uid else ""
    _mount("tmpfs", workdir, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=0700{owner},{size}")
    for path, fd in keep.items():
        os.makedirs(path, exist_ok=True)
        _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        os.close(fd)
    for d in view["hide"]:
        if os.path.isdir(d):  # not already under a covered folder
            _mount("tmpfs", d, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "mode=0755,size=4k")


def _limit(res: int, value: int) -> None:
    try:
        resource.setrlimit(res, (value, value))
    except (ValueError, OSError):
        pass


def _processes_of(uid: int) -> int:
    count = 0
    for name in os.listdir("/proc"):
        try:
            count += name.isdigit() and os.stat(f"/proc/{name}").st_uid == uid
        except OSError:
            pass
    return count


def close_fds(keep: set[int]) -> None:
    """Close every inherited descriptor but `keep` (multiprocessing hands workers its fork server's and resource
    tracker's pipes, which run as root)."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def enter(out_path: str, limits: dict) -> None:
    """Cut the worker off: own session, rlimits, a clean environment, a private working folder, and, where the
    host found them possible (`limits["net"]`, `["view"]`, `["uid"]`), no network, a private file system view
    and a uid of its own. Raises OSError when one of those fails: the worker then refuses to run student code."""
    os.setsid()
    workdir = os.path.dirname(out_path)
    mb = 1 << 20
    _limit(resource.RLIMIT_AS, limits["memory_mb"] * mb)
    _limit(resource.RLIMIT_CPU, limits["cpu_seconds"])
    _limit(resource.RLIMIT_FSIZE, limits["output_kb"] * 1024)
    _limit(resource.RLIMIT_NOFILE, 256)
    _limit(resource.RLIMIT_CORE, 0)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a full output file fails the write, it does not kill
    uid = limits.get("uid")
    if limits.get("net"):
        _unshare_net()
    if limits.get("view"):
        private_view(limits["view"], workdir, uid)
    os.chdir(workdir)
    env = {k: v for k, v in os.environ.items() if k in _KEEP_ENV}  # no CI tokens for student code
    os.environ.clear()
    os.environ.update(env, HOME=workdir)
    if uid:
        _limit(resource.RLIMIT_NPROC, limits["max_processes"])
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    elif os.geteuid() != 0:  # the count is per user: what the user already runs, plus the cap
        _limit(resource.RLIMIT_NPROC, _processes_of(os.getuid()) + limits["max_processes"])


def probe(view: dict, uid: int, readable: list[str], workdir: str) -> dict:
    """Which walls this machine allows, tried for real in this throwaway root process: a network namespace, the
    private view, then Python's files read as `uid`. Each value is None (possible) or why not."""
    found = {"net": None, "mounts": None, "uid": None}
    try:
        _unshare_net()
        with socket.socket() as s:
            s.settimeout(2)
            if s.connect_ex(("127.0.0.1", 9)) in (0, errno.ECONNREFUSED):
                found["net"] = "the loopback interface is still reachable"
    except OSError as e:
        found["net"] = str(e)
    try:
        private_view(view, workdir, uid)
    except OSError as e:
        found["mounts"] = str(e)
    try:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    except OSError as e:  # e.g. a container without CAP_SETUID
        found["uid"] = str(e)
        return found
    for path in readable:
        try:
            os.listdir(path)
        except OSError:
            found["uid"] = f"Python's files under {path} are not readable by other users"
            break
    return found


if __name__ == "__main__":
    print(json.dumps(probe(**json.loads(sys.argv[1]))))
