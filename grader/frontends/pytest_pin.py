"""`pytest --submission PATH` takes no configuration file and no conftest.py: a student's folder may hold either.

pytest looks for `pytest.ini`, `pyproject.toml`, `tox.ini` or `setup.cfg` upward from every path on its command line
(a `--submission FOLDER` value among them) and applies the first one's `addopts` before any plugin loads: a
student's `-p no:attention_grader` there would switch the grader off and let the student's conftest answer for it.
So `attention_grader.pth` (site-packages) calls `pin` at every interpreter start, before pytest reads anything,
when the command line names --submission: pytest then reads `/dev/null` as its configuration, roots in the current
folder and loads no conftest. A teacher's own configuration still applies when given as `-c FILE` (the last -c wins).
The plugin checks the pin again where it loads (`checked`) and fails closed when pytest read a configuration file
from the submission anyway.
"""

from __future__ import annotations

import os
import sys

PIN = "-c /dev/null --rootdir=. --noconftest"
_BEFORE = "ATTENTION_GRADER_PYTEST_ADDOPTS"  # PYTEST_ADDOPTS as it was, for the plugin to put back


def wanted(argv: list[str]) -> bool:
    return any(a == "--submission" or a.startswith("--submission=") for a in argv)


def pin(argv: list[str] | None = None) -> None:
    """Put PIN in front of PYTEST_ADDOPTS when this interpreter runs pytest with --submission."""
    argv = sys.argv if argv is None else argv
    program = os.path.basename(argv[0]) if argv else ""
    if not wanted(argv) or program not in ("pytest", "py.test", "-m") or _BEFORE in os.environ:
        return  # `python -m` hides the module's name here; PYTEST_ADDOPTS means nothing to other programs
    os.environ[_BEFORE] = os.environ.get("PYTEST_ADDOPTS", "")
    os.environ["PYTEST_ADDOPTS"] = f"{PIN} {os.environ[_BEFORE]}".strip()


def unpin() -> None:
    """PYTEST_ADDOPTS as the teacher set it, for whatever this pytest runs in turn."""
    if _BEFORE in os.environ:
        before = os.environ.pop(_BEFORE)
        if before:
            os.environ["PYTEST_ADDOPTS"] = before
        else:
            os.environ.pop("PYTEST_ADDOPTS", None)
