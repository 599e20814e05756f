"""A command leaves nothing running when it returns: no fork server, no grader process, no worker."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid

import pytest

from conftest import CH5_DIR


def survivors(tag: str) -> list[str]:
    """Processes whose environment carries `tag` (every process a command starts inherits it until a worker's
    walls clear its environment; a worker is a child of a fork server, which still has it)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if tag.encode() in f.read():
                    with open(f"/proc/{pid}/cmdline", "rb") as c:
                        found.append(pid + ": " + c.read().replace(b"\0", b" ").decode()[:100])
        except OSError:
            continue
    return found


def run(args: list[str]) -> list[str]:
    tag = f"ATTENTION_GRADER_EXIT_TEST={uuid.uuid4().hex}"
    env = dict(os.environ, ATTENTION_GRADER_EXIT_TEST=tag.split("=", 1)[1])
    subprocess.run([sys.executable, "-m", "grader.frontends.cli", *args], env=env, capture_output=True, timeout=600)
    return survivors(tag)


@pytest.mark.skipif(os.geteuid() != 0, reason="reads other users' /proc/PID/environ")
def test_check_leaves_no_process():
    assert run(["check", str(CH5_DIR / "bug_no_mask.py")]) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="reads other users' /proc/PID/environ")
def test_grade_leaves_no_process(tmp_path):
    for name in ("bug_no_mask.py", "correct_basic.py"):
        shutil.copy(CH5_DIR / name, tmp_path / name)
    assert run(["grade", str(tmp_path), "--out", str(tmp_path / "out"), "--workers", "2"]) == []
