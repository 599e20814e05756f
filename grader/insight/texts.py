"""A submission's graded source as text, in parts: a .py file is one part, a notebook's graded cells one part each,
a folder's Python files and notebooks in path order. Read from a staged copy (submission.staging), as everything
in the grader reads a submission, so a link out of it or a FIFO costs nothing here either."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from grader.submission import staging
from grader.submission.reading import Reading
from grader.submission.source import CELL_MARK, LoadError


@dataclass(frozen=True)
class Text:
    name: str
    parts: tuple[tuple[str, str], ...]  # (label, code): label "" for a lone file, "attention.py", "cell 3"

    def lines(self, part: int) -> list[str]:
        return self.parts[part][1].split("\n")


def read_all(paths: dict[str, Path], reading: Reading = Reading()) -> dict[str, Text | None]:
    """name -> the text of the submission at its path, or None where there is none to read (refused, not UTF-8,
    empty). Staged side by side in one scratch folder: a folder per submission costs more to remove than to read
    on some file systems."""
    found: dict[str, Text | None] = {}
    with tempfile.TemporaryDirectory(prefix="attention-grader-insight-") as scratch:
        taken: set[str] = set()
        for name, path in paths.items():
            into = Path(scratch)
            if Path(path).name in taken:  # two of one name (from two folders): apart
                into = Path(tempfile.mkdtemp(dir=scratch))
            taken.add(Path(path).name)
            found[name] = _read(name, path, into, reading)
    return found


def _read(name: str, path: Path, into: Path, reading: Reading) -> Text | None:
    try:
        staged = staging.stage(path, into)
    except LoadError:
        return None
    if staged.copy is None:
        return None
    files = [staged.copy] if staged.copy.is_file() else sorted(p for p in staged.copy.rglob("*") if p.is_file())
    parts: list[tuple[str, str]] = []
    for f in files:
        label = "" if f == staged.copy else f.relative_to(staged.copy).as_posix()
        parts += _parts(f, label, reading)
    parts = [(label, code) for label, code in parts if code.strip()]
    return Text(name, tuple(parts)) if parts else None


def _parts(path: Path, label: str, reading: Reading) -> list[tuple[str, str]]:
    if path.suffix == ".ipynb":
        return _cells(path, label, reading)
    try:
        return [(label, path.read_text(encoding="utf-8"))]
    except (UnicodeDecodeError, OSError):
        return []


def _cells(path: Path, label: str, reading: Reading) -> list[tuple[str, str]]:
    """The graded cells, one part each (what --notebook-mode grades: definitions only by default)."""
    from grader.submission import notebook  # nbformat's import, only for notebooks

    try:
        code = notebook.source(path, reading.notebook_mode).code
    except LoadError:
        return []
    found = []
    for chunk in code.split(CELL_MARK)[1:]:
        number, _, body = chunk.partition("\n")
        found.append((f"{label} cell {number.strip()}".strip(), body))
    return found
