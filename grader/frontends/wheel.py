"""A wheel of the installed grader, written directly (a wheel is a zip with a dist-info folder): the Gradescope
bundle ships one, and the student build ships one with files taken out and data put in.

Built from the installed package, not from a source checkout, so a teacher who `pip install`ed the grader can
bundle too. No build backend runs; the same files give the same bytes (sorted entries, fixed timestamps).
"""

from __future__ import annotations

import base64
import hashlib
import re
import zipfile
from collections.abc import Sequence
from importlib import metadata, resources
from pathlib import Path

DIST = "attention-grader"
PTH = "attention_grader.pth"  # pins `pytest --submission`'s configuration (frontends.pytest_pin), at site-packages' top
_EPOCH = (1980, 1, 1, 0, 0, 0)  # the zip format's first date: wheels built from the same files are identical


def package_files() -> dict[str, bytes]:
    """Every file of the installed grader by its path inside a wheel. grader.reference and grader.rubrics live
    outside grader/ in a source checkout (pyproject's package-dir), so each is read from where it is."""
    files: dict[str, bytes] = {}
    for package in ("grader", "grader.reference", "grader.rubrics"):
        root = Path(str(resources.files(package)))
        prefix = package.replace(".", "/")
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root)
            if path.is_file() and "__pycache__" not in rel.parts and path.suffix not in (".pyc", ".pyo"):
                files[f"{prefix}/{rel.as_posix()}"] = path.read_bytes()
    pth = Path(str(metadata.distribution(DIST).locate_file(PTH)))
    if pth.is_file():
        files[PTH] = pth.read_bytes()
    return files


def version() -> str:
    return metadata.version(DIST)


def _metadata_text(dist: metadata.Distribution, version: str, summary: str | None, requires: list[str]) -> str:
    """The installed METADATA with this wheel's version (and summary), its long description dropped."""
    msg = dist.metadata
    lines = ["Metadata-Version: 2.1", f"Name: {msg['Name']}", f"Version: {version}"]
    lines.append(f"Summary: {summary or msg['Summary']}")
    for key in ("Requires-Python",):
        if msg[key]:
            lines.append(f"{key}: {msg[key]}")
    lines += [f"Provides-Extra: {e}" for e in msg.get_all("Provides-Extra") or []]
    lines += [f"Requires-Dist: {r}" for r in [*(msg.get_all("Requires-Dist") or []), *requires]]
    return "\n".join(lines) + "\n"


def _hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def write(folder: str | Path, files: dict[str, bytes], *, local: str = "", summary: str | None = None,
          requires: Sequence[str] = ()) -> Path:
    """Write `files` (wheel path -> bytes) as the grader's wheel into `folder`, under the installed version plus
    a local label (`0.2.0+student.chapter5`); its scripts and pytest plugin are those of the installed grader, its
    requirements the grader's and `requires` (the packages a rubric lets student code import)."""
    dist = metadata.distribution(DIST)
    ver = dist.version + (f"+{re.sub(r'[^A-Za-z0-9.]', '.', local)}" if local else "")
    stem = f"{DIST.replace('-', '_')}-{ver}"
    info = f"{stem}.dist-info"
    entries = dict(sorted(files.items()))
    entries[f"{info}/METADATA"] = _metadata_text(dist, ver, summary, list(requires)).encode()
    entries[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: attention-grader\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    entries[f"{info}/entry_points.txt"] = (dist.read_text("entry_points.txt") or "").encode()
    entries[f"{info}/top_level.txt"] = b"grader\n"
    record = "".join(f"{name},{_hash(data)},{len(data)}\n" for name, data in entries.items()) + f"{info}/RECORD,,\n"
    entries[f"{info}/RECORD"] = record.encode()
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries.items():
            info_ = zipfile.ZipInfo(name, _EPOCH)
            info_.external_attr = 0o644 << 16
            info_.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info_, data)
    return path
