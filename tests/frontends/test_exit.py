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


def run(args: list[str], program: tuple[str, ...] = ("-m", "grader.frontends.cli")) -> list[str]:
    """What is still running, or still holds the command's output open, the moment the command's own process has
    exited (multiprocessing's resource tracker did both for a moment, unseen by a caller that reads to the end)."""
    tag = f"ATTENTION_GRADER_EXIT_TEST={uuid.uuid4().hex}"
    env = dict(os.environ, ATTENTION_GRADER_EXIT_TEST=tag.split("=", 1)[1])
    with subprocess.Popen([sys.executable, *program, *args], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT) as proc:  # these commands print far less than a pipe holds
        proc.wait(timeout=600)
        os.set_blocking(proc.stdout.fileno(), False)
        try:
            while os.read(proc.stdout.fileno(), 1 << 16):
                pass
            held = []
        except BlockingIOError:  # no end of file: a process still holds the output open
            held = ["something holds the command's output open"]
        return held + survivors(tag)


@pytest.mark.skipif(os.geteuid() != 0, reason="reads other users' /proc/PID/environ")
def test_check_leaves_no_process():
    assert run(["check", str(CH5_DIR / "bug_no_mask.py")]) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="reads other users' /proc/PID/environ")
@pytest.mark.parametrize("where", [["--workers", "2"], ["--scheduler", "local:2"]], ids=["local pool", "local cluster"])
def test_grade_leaves_no_process(tmp_path, where):
    """A local cluster's worker threads start their grader processes in the command's own process."""
    if "--scheduler" in where:
        pytest.importorskip("distributed")
    for name in ("bug_no_mask.py", "correct_basic.py"):
        shutil.copy(CH5_DIR / name, tmp_path / name)
    assert run(["grade", str(tmp_path), "--out", str(tmp_path / "out"), *where]) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="reads other users' /proc/PID/environ")
def test_pytest_submission_leaves_no_process(tmp_path):
    assert run(["-q", "-p", "no:cacheprovider", "--submission", str(CH5_DIR / "bug_no_mask.py")], ("-m", "pytest")) == []


STOPPED = """
import os
from multiprocessing import resource_tracker
from grader.sandbox import spawn
spawn.warm_up()
tracker = resource_tracker._resource_tracker._pid
spawn.stop_server()
print(tracker is not None, os.path.exists(f"/proc/{tracker}"))
"""


def test_the_fork_servers_end_ends_the_resource_tracker_started_with_it():
    """Left to notice its parent's exit, the tracker outlives every command by a moment, holding its output open."""
    done = subprocess.run([sys.executable, "-c", STOPPED], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["True", "False"], done.stdout + done.stderr
