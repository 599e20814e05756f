"""The namespaces a worker enters: a user namespace of its own (as a normal user, for the capabilities to raise
the rest, dropped again before student code runs), no network, and a private mount namespace whose view of the
file system holds Python and nothing the worker should not see. (The PID namespace is `pid_namespace`'s.)"""

from __future__ import annotations

import os
import struct

from grader.sandbox.worker.walls import linux
from grader.sandbox.worker.walls.linux import (
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWUSER,
    MS_BIND,
    MS_NODEV,
    MS_NOSUID,
    MS_PRIVATE,
    MS_RDONLY,
    MS_REC,
)

SYS_CAPSET = 126 if os.uname().machine == "x86_64" else 91  # aarch64: 91


def unshare_net() -> None:
    linux.unshare(CLONE_NEWNET, "CLONE_NEWNET")


def own_user_namespace() -> None:
    """A user namespace in which this process keeps its uid and holds the capabilities to raise the other walls
    (dropped again by `drop_capabilities` before student code runs). Reads /proc/self: before any new /proc."""
    uid, gid = os.getuid(), os.getgid()
    linux.unshare(CLONE_NEWUSER, "CLONE_NEWUSER")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)


def drop_capabilities() -> None:
    """No capability left (those a user namespace gave): the mounts that hide things stay where they are."""
    header = struct.pack("Ii", 0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    data = bytes(24)  # effective, permitted, inheritable: empty, for both 32-bit halves
    linux.check(linux.libc.syscall(SYS_CAPSET, header, data), "capset")
    linux.no_new_privs()


def private_view(view: dict, workdir: str, uid: int | None) -> None:
    """A private mount namespace in which the worker's uid can read Python and nothing it should not see.

    `view` (from sandbox.fs_view.view_plan): `cover` dirs that other users cannot traverse (e.g. /root, mode 700,
    holding pyenv's Python) become empty tmpfs with only the `expose` paths bound back at the same place;
    `scratch` (/tmp, /var/tmp, /dev/shm) becomes one private size-capped tmpfs, so a worker's files vanish with
    it; `hide` (every grader package but the sandbox: the reference, the rubrics, the planted bugs) becomes an
    empty read-only tmpfs. The working folder is a fresh tmpfs too, with the submission's copied folder (`src`)
    bound back; output goes through descriptors opened before this.
    """
    linux.unshare(CLONE_NEWNS, "CLONE_NEWNS")
    linux.mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing mounted here leaks to the host
    src = os.path.join(workdir, "src")
    keep = {p: os.open(p, os.O_PATH) for p in view["expose"]}  # opened in this namespace, before being covered
    if os.path.isdir(src):
        keep[src] = os.open(src, os.O_PATH)
    size = f"size={view['scratch_mb']}m"
    for d in view["cover"]:
        linux.mount("tmpfs", d, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k")
    if view["scratch"]:
        first, *rest = view["scratch"]
        linux.mount("tmpfs", first, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,{size}")
        for d in rest:
            linux.mount(first, d, None, MS_BIND)
    os.makedirs(workdir, exist_ok=True)
    owner = f",uid={uid},gid={uid}" if uid else ""
    linux.mount("tmpfs", workdir, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=0700{owner},{size}")
    for path, fd in keep.items():
        os.makedirs(path, exist_ok=True)
        linux.mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        os.close(fd)
    for d in view["hide"]:
        if os.path.isdir(d):  # not already under a covered folder
            linux.mount("tmpfs", d, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "mode=0755,size=4k")
