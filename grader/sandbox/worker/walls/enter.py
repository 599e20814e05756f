"""Raising a worker's walls, in the one order that works: the limits, then the namespaces (the user namespace
first, whose capabilities the others need), the private view, the PID namespace's fork, a clean environment, the
uid (or the capabilities dropped), Landlock, and seccomp last. Runs inside the worker before any student code."""

from __future__ import annotations

import os

from grader.sandbox.worker.walls import landlock, namespaces, pid_namespace, rlimits, seccomp

_KEEP_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ")


def enter(out_path: str, limits: dict) -> None:
    """Cut the worker off: own session, rlimits, a clean environment, a private working folder, and, where the
    host found them possible, no network, a private file system view, its own PID namespace and /proc, Landlock
    and a uid of its own (as root) or a user namespace (as a normal user). Raises OSError when one of those
    fails: the worker then refuses to run student code."""
    os.setsid()
    workdir = os.path.dirname(out_path)
    uid = limits.get("uid")
    rlimits.apply(limits, uid)
    if limits.get("userns"):
        namespaces.own_user_namespace()
    if limits.get("net"):
        namespaces.unshare_net()
    if limits.get("pids"):
        pid_namespace.unshare_pids()
    if limits.get("view"):
        namespaces.private_view(limits["view"], workdir, uid)
    relay = pid_namespace.split() if limits.get("pids") else None  # from here on, PID 1 of the new namespace
    os.chdir(workdir)
    env = {k: v for k, v in os.environ.items() if k in _KEEP_ENV}  # no CI tokens for student code
    os.environ.clear()
    os.environ.update(env, HOME=workdir, TMPDIR=workdir)
    if uid:
        rlimits.cap_own_uid(limits["max_processes"])
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    elif limits.get("userns"):
        namespaces.drop_capabilities()
    if relay is not None:
        pid_namespace.die_with_relay(relay)
    if limits.get("landlock"):
        plan = limits["landlock"]
        landlock.restrict(plan["read"], [workdir] + (plan["scratch"] if limits.get("view") else []))
    if limits.get("seccomp"):
        seccomp.install()
