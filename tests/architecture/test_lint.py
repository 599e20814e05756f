"""The linters, configured in pyproject.toml, run by `make test`: ruff (style, import order, likely bugs) and mypy
(the annotations hold). Each one runs once, on the whole repository, as a developer runs it."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT


def _tool(name: str) -> str:
    """The tool beside this interpreter (the venv's), else on PATH; a skip that says how to get it."""
    here = Path(sys.executable).with_name(name)
    found = str(here) if here.exists() else shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed: pip install -e '.[test]' (the test extra has it)")
    return found


def _run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_is_clean():
    done = _run(_tool("ruff"), "check", "--no-cache", "--output-format", "concise", ".")
    assert done.returncode == 0, f"ruff check found:\n{done.stdout}{done.stderr}"


def test_mypy_is_clean():
    done = _run(_tool("mypy"))  # what to check, and how, is [tool.mypy] in pyproject.toml
    assert done.returncode == 0, f"mypy found:\n{done.stdout}{done.stderr}"
