"""The walls probe starts with the fork server, beside this process's import of torch, and walls() reads its answer;
it leaves nothing behind, even when the process that started it is killed first."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from grader.sandbox import confinement


def test_walls_reads_the_probe_started_early(monkeypatch):
    monkeypatch.setattr(confinement, "_early", {})
    confinement.walls.cache_clear()
    started = []
    start = confinement._probe_start
    monkeypatch.setattr(confinement, "_probe_start", lambda args: started.append(1) or start(args))
    try:
        confinement.start_probe()
        confinement.start_probe()  # once per process
        assert started == [1] and os.getpid() in confinement._early
        assert set(confinement.walls()) == set(confinement.WALLS)
        assert started == [1] and not confinement._early  # read, not probed again
    finally:
        confinement.walls.cache_clear()


STARTER = """
import os, sys
from grader.sandbox import confinement
confinement.start_probe()
print(confinement._early[os.getpid()][0].pid, flush=True)
sys.stdin.read()
"""


def test_a_killed_starter_leaves_no_probe_and_no_folder(tmp_path):
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    starter = subprocess.Popen([sys.executable, "-c", STARTER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True, env=env)
    probe = int(starter.stdout.readline())
    starter.send_signal(signal.SIGKILL)  # as pytest's pin ends a grading process that was not needed
    starter.wait()
    deadline = time.monotonic() + 60
    while running(probe) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not running(probe)
    assert list(tmp_path.iterdir()) == []  # its working folder, removed by the probe itself


def running(pid: int) -> bool:
    """Alive and not a zombie (where this process is a subreaper, the orphaned probe is its child)."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    except ChildProcessError:
        pass
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
