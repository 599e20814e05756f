"""A rubric's example plan: for each check, the examples hypothesis draws, recorded once by grading the reference.

Draws are seeded (checks.draws), so every submission that passes a check meets exactly these examples; `Ctx.prove`
replays them without hypothesis and runs hypothesis only when one fails. A plan is kept in memory and on disk
under a key of everything that decides the draws (the grader's code, the rubric, the draws' salt, the versions of
Python, torch, hypothesis and numpy); one that cannot be read is recorded again, one that cannot be written is
kept in memory. Plans drawn under a course secret are examples no student may know: the folder is made 0700 (the
user's default one tightened to it if an older grader made it open) and every file in it 0600.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import os
import sys
from collections.abc import Callable
from importlib import metadata
from importlib.util import find_spec
from pathlib import Path

import torch

import grader

_plans: dict[str, dict] = {}


def key(rubric, draws, works: tuple | None = None) -> str:
    h = hashlib.sha256(rubric.model_dump_json().encode())
    h.update(draws.key.encode())
    if works:  # the input forms a submission handles, where fewer than all: its checks draw within them
        h.update(repr(works).encode())
    h.update(_environment())
    return f"{rubric.name}-{h.hexdigest()[:20]}"


@functools.cache
def _environment() -> bytes:
    """The versions and the grader's code, read once per process (5 ms): the code it runs is what it imported."""
    h = hashlib.sha256()
    for dist in ("torch", "hypothesis", "numpy"):
        h.update(f"{dist} {metadata.version(dist)}\n".encode())
    h.update(sys.version.encode())
    for pkg in _code_folders():
        for f in sorted(pkg.rglob("*.py")):
            h.update(str(f.relative_to(pkg)).encode() + f.read_bytes())
    return h.digest()


def _code_folders() -> set[Path]:
    """The grader's package and its reference, which an editable install keeps outside it."""
    spec = find_spec("grader.reference")
    return {Path(p) for p in grader.__path__} | {Path(p) for p in ((spec and spec.submodule_search_locations) or [])}


def folder() -> Path:
    """Where plans are kept: $ATTENTION_GRADER_CACHE, else the user's cache folder."""
    if os.environ.get("ATTENTION_GRADER_CACHE"):
        return Path(os.environ["ATTENTION_GRADER_CACHE"])
    return _default()


def _default() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "attention-grader" / "plans"


def _private_folder(path: Path) -> None:
    """`path` made 0700; the default folder, when it exists open to others and is this user's, closed (a folder
    named in $ATTENTION_GRADER_CACHE that exists is the teacher's to set: its files are 0600 all the same)."""
    try:
        path.mkdir(mode=0o700, parents=True)
        return
    except FileExistsError:
        pass
    st = os.stat(path)
    if path == _default() and st.st_uid == os.geteuid() and st.st_mode & 0o077:
        os.chmod(path, 0o700)


def _create(path: Path, flags: int) -> int:
    """A file of this user's alone: made 0600, and one an older grader left open closed."""
    fd = os.open(path, flags | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    st = os.fstat(fd)
    if st.st_uid == os.geteuid() and st.st_mode & 0o077:
        os.fchmod(fd, 0o600)
    return fd


def get(rubric, draws, record: Callable[[], dict], works: tuple | None = None) -> dict:
    """check id -> what `Ctx.prove` replays under these draws (checks.draws) for a submission that handles the input
    forms `works` (all of them when None); recorded by `record()` when neither memory nor disk has it. Grader
    processes starting side by side record it once: the others wait for the file."""
    name = key(rubric, draws, works)
    if name in _plans:
        return _plans[name]
    path = folder() / f"{name}.pt"
    try:
        _private_folder(path.parent)
        lock = os.fdopen(_create(path.with_suffix(".lock"), os.O_WRONLY | os.O_APPEND), "a")
    except OSError:
        _plans[name] = record()
        return _plans[name]
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        plan = _read(path)
        if plan is None:
            plan = record()
            _write(path, plan)
    _plans[name] = plan
    return plan


def _read(path: Path) -> dict | None:
    try:
        plan = torch.load(path, weights_only=True)  # tensors, tuples and numbers only: no code
    except Exception:  # noqa: BLE001 - missing, truncated or from another torch: record it again
        return None
    return plan if isinstance(plan, dict) else None


def _write(path: Path, plan: dict) -> None:
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        with os.fdopen(_create(tmp, os.O_WRONLY | os.O_TRUNC), "wb") as f:
            torch.save(plan, f)
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)


def passed(grading) -> dict[str, list]:
    """What `grading` (an engine.Grading, planned=False) drew for each check it passes, recorded as it grades."""
    from grader.grading.outcome import Status

    grading.recorded = {}
    grade = grading.finish()
    return {o.id: grading.recorded[o.id] for o in grade.outcomes if o.status is Status.PASSED and o.id in grading.recorded}
