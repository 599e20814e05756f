"""What a worker's private view of the file system holds, planned in the grader from stat alone: Python's files
(bound back where other users cannot reach them), private scratch folders, and every grader package but the
sandbox hidden. The worker mounts it (`walls.namespaces.private_view`) and Landlock allows no more."""

from __future__ import annotations

import functools
import os
import pkgutil
import stat
import sysconfig
from importlib.util import find_spec

SCRATCH_MB = 64  # a worker's private /tmp and working folder (tmpfs: memory, so capped)


def python_paths() -> list[str]:
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
    if not first:
        return None
    assert last is not None  # set with first: what covers first is itself on the way, or first is not traversable
    return first, last


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
    """Every package of the grader but the sandbox: the reference (the planted bugs' core with it) and the rubrics,
    and the rest, which a worker has no use for."""
    import grader

    names = {m.name for m in pkgutil.iter_modules(grader.__path__) if m.ispkg} | {"reference", "rubrics"}
    found = {_package_dir(f"grader.{n}") for n in sorted(names - {"sandbox"})}
    return sorted(os.path.realpath(d) for d in found if d)


@functools.cache
def view_plan() -> dict:
    """What the worker's `walls.namespaces.private_view` mounts and `walls.landlock` allows: computed here once,
    from stat alone."""
    scratch = [d for d in ("/tmp", "/var/tmp", "/dev/shm") if os.path.isdir(d) and os.stat(d).st_mode & stat.S_IWOTH]
    cover: list[str] = []
    expose: list[str] = []
    for path in python_paths():
        found = _blocker(path, scratch + cover)
        if found:
            if found[0] not in scratch + cover:
                cover.append(found[0])
            if found[1] not in expose:
                expose.append(found[1])
    hide = _secret_dirs()
    system = [d for d in ("/usr", "/lib", "/lib64", "/etc", "/dev", "/proc", "/sys") if os.path.isdir(d)]
    read = _readable(sorted(set(python_paths() + system)), hide)
    return {"cover": cover, "expose": expose, "scratch": scratch, "hide": hide, "scratch_mb": SCRATCH_MB, "read": read}


def torch_dir() -> str:
    spec = find_spec("torch")
    assert spec is not None and spec.origin is not None, "the grader runs with torch installed"
    return os.path.dirname(spec.origin)
