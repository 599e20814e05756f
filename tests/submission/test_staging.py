"""Staging: a submission's Python files copied into a private folder, and nothing else read. Links that leave the
submission, special files, oversized files and odd names are refused in one line, without being opened."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from conftest import CH5_DIR, ROOT

from grader.submission import staging
from grader.submission.source import LoadError

GOOD = (CH5_DIR / "correct_basic.py").read_text()


def stage(path, tmp_path: Path, **caps) -> staging.Staged:
    into = tmp_path / f"into-{len(list(tmp_path.glob('into-*')))}"
    into.mkdir()
    return staging.stage(path, into, staging.Caps(**caps))


def folder(tmp_path: Path, name: str = "alice") -> Path:
    sub = tmp_path / name
    sub.mkdir()
    (sub / "attention.py").write_text(GOOD)
    return sub


def test_a_file_and_a_folder_are_copied_with_their_python_only(tmp_path):
    sub = folder(tmp_path)
    (sub / "pkg").mkdir()
    (sub / "pkg" / "__init__.py").write_text("")
    (sub / "notes.txt").write_text("never read")
    (sub / ".hidden.py").write_text("skipped")
    (sub / "__pycache__").mkdir()
    got = stage(sub, tmp_path)
    assert got.refused == "" and got.shown == sub and got.copy.name == "alice"
    assert sorted(p.relative_to(got.copy).as_posix() for p in got.copy.rglob("*")) == [
        "attention.py", "pkg", "pkg/__init__.py"]
    one = stage(sub / "attention.py", tmp_path)
    assert one.copy.read_text() == GOOD and one.copy.name == "attention.py"


def test_the_digest_follows_the_content_and_not_where_the_copy_is(tmp_path):
    sub = folder(tmp_path)
    first, second = stage(sub, tmp_path), stage(sub, tmp_path)
    assert first.copy != second.copy and first.digest() == second.digest()
    (sub / "attention.py").write_text(GOOD + "\n# changed\n")
    assert stage(sub, tmp_path).digest() != first.digest()


def test_a_link_inside_the_submission_is_copied_as_its_target(tmp_path):
    sub = folder(tmp_path)
    (sub / "impl").mkdir()
    (sub / "impl" / "core.py").write_text("X = 1\n")
    (sub / "alias.py").symlink_to("impl/core.py")
    (sub / "again").symlink_to("impl")
    got = stage(sub, tmp_path)
    assert got.refused == ""
    assert (got.copy / "alias.py").read_text() == "X = 1\n" and not (got.copy / "alias.py").is_symlink()
    assert (got.copy / "again" / "core.py").read_text() == "X = 1\n"


@pytest.mark.parametrize("target", [
    ROOT / "reference" / "chapter5.py",  # the reference itself (score 100 before staging)
    "SIBLING",  # a classmate's file in the same batch
    "/etc/shadow",  # readable by root only: its first line was echoed in a syntax error
    "/etc",  # a folder
    "/dev/zero",  # endless
    "../alice/attention.py",  # relative, still out
    "/nonexistent/file.py",  # dangling
])
def test_a_link_that_leaves_the_submission_is_refused_and_never_followed(tmp_path, target):
    sub = folder(tmp_path, "bob")
    (sub / "attention.py").unlink()
    classmate = folder(tmp_path, "alice")
    (sub / "attention.py").symlink_to(classmate / "attention.py" if target == "SIBLING" else target)
    got = stage(sub, tmp_path)
    assert got.copy is None
    assert got.refused == f"{sub / 'attention.py'}: a symbolic link that leads out of the submission; hand in the file itself"


def test_the_submission_itself_may_not_be_a_link(tmp_path):
    real = folder(tmp_path)
    (tmp_path / "link.py").symlink_to(real / "attention.py")
    (tmp_path / "linkdir").symlink_to(real)
    for link in ("link.py", "linkdir"):
        assert stage(tmp_path / link, tmp_path).refused.endswith("a symbolic link; hand in the file itself")


def test_a_fifo_is_refused_without_blocking(tmp_path):
    sub = folder(tmp_path)
    os.mkfifo(sub / "data.py")
    os.mkfifo(tmp_path / "top.py")
    start = time.monotonic()
    assert stage(sub, tmp_path).refused == f"{sub / 'data.py'}: a FIFO, not a file; hand in regular files only"
    assert stage(tmp_path / "top.py", tmp_path).refused == f"{tmp_path / 'top.py'}: a FIFO, not a file"
    assert time.monotonic() - start < 5


def test_a_link_loop_is_refused(tmp_path):
    sub = folder(tmp_path)
    (sub / "loop").symlink_to(".")
    assert "a symbolic link to a folder that holds it (a loop)" in stage(sub, tmp_path).refused


def test_a_huge_file_is_refused_by_its_size_before_anything_reads_it(tmp_path):
    huge = tmp_path / "huge.py"
    with open(huge, "wb") as f:
        f.truncate(10 << 30)  # 10 GiB, sparse: reading it would take minutes
    start = time.monotonic()
    got = stage(huge, tmp_path)
    assert got.refused == f"{huge}: 10.0 GB, more than the 2.0 MB a Python file may have (the rubric's limits)"
    assert time.monotonic() - start < 2
    nb = tmp_path / "big.ipynb"
    nb.write_bytes(b" " * (40 << 10))
    assert "a notebook may have" in stage(nb, tmp_path, notebook_kb=32).refused
    assert stage(nb, tmp_path, notebook_kb=64).refused == ""


def test_many_small_files_add_up_to_the_limit(tmp_path):
    sub = folder(tmp_path)
    for i in range(8):
        (sub / f"part{i}.py").write_text("x = 1\n" * 500)  # 3 KB each
    assert stage(sub, tmp_path, source_kb=32).refused == ""
    assert "Python files come to more than the 16 KB" in stage(sub, tmp_path, source_kb=16).refused
    many = tmp_path / "many"
    many.mkdir()
    for i in range(staging.MAX_FILES + 1):
        (many / f"m{i}.py").write_text("")
    assert f"more than {staging.MAX_FILES} Python files" in stage(many, tmp_path).refused


def test_a_name_with_control_characters_is_refused(tmp_path):
    sub = folder(tmp_path)
    (sub / "evil\nFAIL loads.py").write_text("")
    refused = stage(sub, tmp_path).refused
    assert "a file name with control characters" in refused and "\n" not in refused


def test_a_missing_path_is_a_load_error(tmp_path):
    with pytest.raises(LoadError, match="no such file or folder"):
        stage(tmp_path / "gone.py", tmp_path)


def link_bomb(tmp_path: Path, depth: int = 14, links: int = 4) -> Path:
    """The audit's bomb: folders nested `depth` deep, each holding `links` links to the next (all inside it)."""
    sub = folder(tmp_path, "bomb")
    level = sub
    for i in range(depth):
        nxt = level / f"d{i}"
        nxt.mkdir()
        for j in range(links):
            (level / f"l{i}_{j}").symlink_to(nxt.name)
        level = nxt
    return sub


def test_a_link_bomb_is_refused_by_the_entries_it_would_copy_and_leaves_nothing(tmp_path):
    sub = link_bomb(tmp_path)
    assert sum(1 for p in sub.rglob("*") if p.is_symlink()) == 56
    into = tmp_path / "into"
    into.mkdir()
    start = time.monotonic()
    got = staging.stage(sub, into)
    assert time.monotonic() - start < 10
    assert got.copy is None
    assert got.refused == (f"{sub}: more than {staging.MAX_ENTRIES} files and folders (a link to a folder copies that "
                           "folder again); hand in fewer")
    assert list(into.iterdir()) == []  # none of the folders it made is left behind


def test_a_folders_notebooks_together_are_capped(tmp_path):
    sub = folder(tmp_path)
    for i in range(3):
        (sub / f"part{i}.ipynb").write_bytes(b" " * (40 << 10))  # each under the cap, together over it
    assert stage(sub, tmp_path, notebook_kb=128).refused == ""
    assert stage(sub, tmp_path, notebook_kb=64).refused == (
        f"{sub}: its Python files and notebooks come to more than the 64 KB a submission may have (the rubric's limits)")


@pytest.mark.parametrize("how", ["refused", "interrupted", "disk full"])
def test_a_copy_refused_or_interrupted_half_way_is_removed(tmp_path, monkeypatch, how):
    sub = folder(tmp_path)
    (sub / "pkg").mkdir()
    (sub / "pkg" / "a.py").write_text("A = 1\n")
    (sub / "zz.py").symlink_to("/etc/hostname")  # after the others in name order: refused once they are copied
    if how != "refused":
        (sub / "zz.py").unlink()
        copied, opened = staging._Copier._file, os.open

        def interrupted(self, src, dest, where):
            copied(self, src, dest, where)
            if self.files == 2:
                raise KeyboardInterrupt

        def full(path, flags, *mode, **kw):
            if flags & os.O_CREAT and Path(path).name == "attention.py":
                raise OSError(28, os.strerror(28))
            return opened(path, flags, *mode, **kw)

        if how == "interrupted":
            monkeypatch.setattr(staging._Copier, "_file", interrupted)
        else:
            monkeypatch.setattr(staging.os, "open", full)
    into = tmp_path / "into"
    into.mkdir()
    if how == "refused":
        assert "leads out of the submission" in staging.stage(sub, into).refused
    elif how == "disk full":
        assert staging.stage(sub, into).refused == f"{sub}: cannot be copied ({os.strerror(28)})"
    else:
        with pytest.raises(KeyboardInterrupt):
            staging.stage(sub, into)
    assert list(into.iterdir()) == []
