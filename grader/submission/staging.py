"""A submission as the grader may read it: its Python files, copied once into a private folder.

Everything downstream (hashing, parsing, the worker, a Dask task's bytes) reads the copy, never what the student
handed in. Walking the original touches only names and `lstat`: no link is followed out of the submission, no file
is opened that is not a regular file within the size limits (`O_NOFOLLOW | O_NONBLOCK`, checked again on the open
descriptor), so a link to the reference, to a classmate's file or to `/etc/shadow`, a FIFO, `/dev/zero` or a 10 GB
file cost the `loads` check with one line and nothing else. A link inside the submission is fine: its target's
bytes are copied under the link's name. What a copy may come to is capped whatever links multiply: entries (folders
included), depth, and bytes (the Python files, and everything together). A refused or interrupted copy is removed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from grader.submission.source import LoadError, size_text

CODE = (".py", ".ipynb")  # what is copied; any other file is never opened (the worker saw no other file before)
MAX_FILES = 500
MAX_DEPTH = 16
MAX_ENTRIES = 5000  # files and folders listed, a link to a folder counting its folder again: 52 links made 212,000


class Refused(LoadError):
    """The submission cannot be read safely as handed in; the message says what to change."""


@dataclass(frozen=True)
class Staged:
    shown: Path  # the path as the caller gave it: what reports and replay commands name
    copy: Path | None  # the private copy everything reads; None when refused
    refused: str = ""  # why there is no copy, one line

    def digest(self) -> str:
        """sha256 of the copy's files (relative path and content, sorted), or of the refusal."""
        h = hashlib.sha256()
        if self.copy is None:
            h.update(f"refused {self.refused}\n".encode())
            return h.hexdigest()
        files = [self.copy] if self.copy.is_file() else sorted(p for p in self.copy.rglob("*") if p.is_file())
        for p in files:
            rel = p.name if p == self.copy else p.relative_to(self.copy).as_posix()
            data = p.read_bytes()
            h.update(f"file {rel} {len(data)}\n".encode() + data)
        return h.hexdigest()


@dataclass(frozen=True)
class Caps:
    source_kb: int = 2048  # one .py file, and a folder's Python files together
    notebook_kb: int = 20480  # one notebook, its outputs included, and everything a folder's copy holds together

    @classmethod
    def of(cls, limits) -> Caps:
        """A rubric's [limits] (sandbox.limits.Limits)."""
        return cls(limits.max_source_kb, limits.max_notebook_kb)


def stage(path: str | Path, into: Path, caps: Caps = Caps()) -> Staged:
    """Copy the submission at `path` into the empty folder `into`, under its own name; a refusal instead of a
    copy when it cannot be read safely. A missing path raises LoadError, as reading it always did."""
    shown = Path(path)
    copier = _Copier(shown, into, caps)
    try:
        copy = copier.run()
    except Refused as e:
        copier.remove()
        return Staged(shown, None, str(e))
    except BaseException:  # interrupted (a signal, the disk full): nothing half-copied is left behind
        copier.remove()
        raise
    return Staged(shown, copy, "")


class _Copier:
    def __init__(self, root: Path, into: Path, caps: Caps):
        self.root, self.into, self.caps = root, into, caps
        self.real = os.path.realpath(root)
        self.files = 0
        self.entries = 0  # files and folders listed
        self.code = 0  # bytes of Python copied
        self.total = 0  # bytes copied
        self.made: Path | None = None  # the copy's top, once this copier made it

    def remove(self) -> None:
        """Whatever of the copy this copier made."""
        if self.made is None:
            return
        if self.made.is_dir() and not self.made.is_symlink():
            shutil.rmtree(self.made, ignore_errors=True)
        else:
            self.made.unlink(missing_ok=True)
        self.made = None

    def run(self) -> Path:
        try:
            st = os.lstat(self.root)
        except FileNotFoundError:
            raise LoadError(f"{self.root}: no such file or folder") from None
        except OSError as e:
            raise Refused(f"{self.root}: cannot be read ({e.strerror})") from None
        dest = self.into / _name(Path(os.path.abspath(self.root)).name or "submission", str(self.root))
        if stat.S_ISLNK(st.st_mode):
            raise Refused(f"{self.root}: a symbolic link; hand in the file itself")
        try:
            if stat.S_ISDIR(st.st_mode):
                self._folder(Path(self.real), dest, self.root, (self.real,))
            elif not stat.S_ISREG(st.st_mode):
                raise Refused(f"{self.root}: {_kind(st.st_mode)}, not a file")
            elif self.root.suffix not in CODE:
                raise Refused(f"{self.root}: not a .py file, a notebook or a folder")
            else:
                self._file(self.root, dest, self.root)
        except OSError as e:  # writing the copy (no space left, too long a name): the copy fails, not the grader
            raise Refused(f"{self.root}: cannot be copied ({e.strerror or e})") from None
        return dest

    def _made(self, dest: Path) -> None:
        if self.made is None:
            self.made = dest

    def _folder(self, src: Path, dest: Path, shown: Path, seen: tuple[str, ...]) -> None:
        """src: where the files are, a real path (no link in it); shown: the same folder as the student knows it."""
        if len(seen) > MAX_DEPTH:
            raise Refused(f"{shown}: folders nested more than {MAX_DEPTH} deep")
        if self.made is None:  # the top; a folder below is made when a file goes into it (`_file`)
            dest.mkdir(mode=0o700)
            self._made(dest)
        try:
            with os.scandir(src) as listing:
                entries = []
                for entry in listing:  # counted as listed: a folder of a million files is not listed whole
                    if entry.name.startswith(".") or entry.name == "__pycache__":
                        continue
                    self.entries += 1
                    if self.entries > MAX_ENTRIES:
                        raise Refused(f"{self.root}: more than {MAX_ENTRIES} files and folders (a link to a folder "
                                      "copies that folder again); hand in fewer")
                    entries.append(entry)
        except OSError as e:
            raise Refused(f"{shown}: cannot be read ({e.strerror})") from None
        for entry in sorted(entries, key=lambda e: e.name):
            where = shown / entry.name
            target = dest / _name(entry.name, str(where))
            st = entry.stat(follow_symlinks=False)
            real = entry.path
            if stat.S_ISLNK(st.st_mode):
                st, real = self._inside(entry.path, where)
            if stat.S_ISDIR(st.st_mode):
                if real in seen:
                    raise Refused(f"{where}: a symbolic link to a folder that holds it (a loop)")
                self._folder(Path(real), target, where, seen + (real,))
            elif not stat.S_ISREG(st.st_mode):
                raise Refused(f"{where}: {_kind(st.st_mode)}, not a file; hand in regular files only")
            elif target.suffix in CODE:
                self._file(Path(real), target, where)

    def _inside(self, link: str, where: Path) -> tuple[os.stat_result, str]:
        """A link's target, when it lies inside the submission (realpath reads links, it opens no file)."""
        real = os.path.realpath(link)
        if os.path.commonpath([real, self.real]) != self.real:
            raise Refused(f"{where}: a symbolic link that leads out of the submission; hand in the file itself")
        try:
            return os.lstat(real), real
        except OSError:
            raise Refused(f"{where}: a symbolic link to nothing") from None

    def _file(self, src: Path, dest: Path, where: Path) -> None:
        """Copy one file, its size read from the open descriptor: what was checked is what is read."""
        self.files += 1
        if self.files > MAX_FILES:
            raise Refused(f"{self.root}: more than {MAX_FILES} Python files and notebooks")
        notebook = dest.suffix == ".ipynb"
        cap = (self.caps.notebook_kb if notebook else self.caps.source_kb) * 1024
        try:
            fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as e:
            raise Refused(f"{where}: cannot be read ({e.strerror})") from None
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):  # swapped for something else since it was listed
                raise Refused(f"{where}: {_kind(st.st_mode)}, not a file")
            if st.st_size > cap:
                raise Refused(f"{where}: {size_text(st.st_size)}, more than the {size_text(cap)} a "
                              f"{'notebook' if notebook else 'Python file'} may have (the rubric's limits)")
            data = f.read(cap + 1)
        if not notebook:
            self.code += len(data)
            if self.code > self.caps.source_kb * 1024 or len(data) > cap:
                raise Refused(f"{self.root}: its Python files come to more than the {size_text(self.caps.source_kb * 1024)} "
                              "a submission may have (the rubric's limits)")
        self.total += len(data)
        if self.total > self.caps.notebook_kb * 1024:
            raise Refused(f"{self.root}: its Python files and notebooks come to more than the "
                          f"{size_text(self.caps.notebook_kb * 1024)} a submission may have (the rubric's limits)")
        if self.made is not None and dest.parent != self.made:
            dest.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        self._made(dest)
        with os.fdopen(fd, "wb") as out:
            out.write(data)


def _name(name: str, where: str) -> str:
    """A file name the reports can print: UTF-8 and no control characters (a newline would forge a line)."""
    if any(ord(c) < 32 or ord(c) == 127 or 0xDC80 <= ord(c) <= 0xDCFF for c in name):
        raise Refused(f"{ascii(where)}: a file name with control characters or bytes that are not UTF-8; rename it")
    return name


def _kind(mode: int) -> str:
    for test, word in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"),
                       (stat.S_ISBLK, "a device"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return word
    return "a special file"
