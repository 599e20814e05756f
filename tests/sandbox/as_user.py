"""Run a command as an unprivileged user, as root: `python tests/sandbox/as_user.py USER -- CMD...`.

Creates the user if missing (useradd). Python may live where other users cannot reach it (pyenv under /root, mode
700): in a mount namespace of its own, each such folder is covered by an empty tmpfs with Python bound back, as the
grader's private view does for its workers, then the command runs as the user (setpriv). Nothing else changes.
"""

from __future__ import annotations

import ctypes
import os
import pwd
import stat
import subprocess
import sys
import sysconfig

CLONE_NEWNS, MS_BIND, MS_REC, MS_PRIVATE = 0x00020000, 4096, 16384, 1 << 18
_libc = ctypes.CDLL(None, use_errno=True)


def ensure_user(name: str) -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True)
        return pwd.getpwnam(name)


def _mount(src, target, fstype, flags, data=None) -> None:
    enc = lambda s: s.encode() if s is not None else None  # noqa: E731
    if _libc.mount(enc(src), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)):
        raise OSError(ctypes.get_errno(), f"mount {target}")


def open_python_to_others() -> None:
    """Cover each folder other users cannot traverse on the way to Python's files (and the grader's, for an editable
    install), binding those back."""
    paths = {os.path.realpath(p) for p in sysconfig.get_paths().values() if os.path.isdir(p)}
    paths |= {os.path.realpath(p) for p in [sys.base_prefix, *sys.path] if p and os.path.isdir(p)}  # an editable install
    plan: dict[str, set[str]] = {}
    for path in sorted(paths):
        parts = path.split(os.sep)
        for i in range(2, len(parts)):
            d = os.sep.join(parts[:i])
            if not os.stat(d).st_mode & stat.S_IXOTH:
                plan.setdefault(d, set()).add(os.sep.join(parts[: i + 1]))
                break
    if not plan:
        return
    if _libc.unshare(CLONE_NEWNS):
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS)")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    keep = {p: os.open(p, os.O_PATH) for exposed in plan.values() for p in exposed}
    for d in plan:
        _mount("tmpfs", d, "tmpfs", 0, "mode=0755,size=64k")
    for p, fd in keep.items():
        os.makedirs(p, exist_ok=True)
        _mount(f"/proc/self/fd/{fd}", p, None, MS_BIND | MS_REC)
        os.close(fd)


def main(argv: list[str]) -> int:
    name, sep, *cmd = argv
    assert sep == "--" and cmd, __doc__
    user = ensure_user(name)
    open_python_to_others()
    env = {k: v for k, v in os.environ.items() if k not in ("HOME", "USER", "LOGNAME")}
    env.update(HOME="/nonexistent", USER=name, LOGNAME=name)
    os.execvpe("setpriv", ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups",
                           "--inh-caps=-all", "--", *cmd], env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
