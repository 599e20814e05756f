"""What the platform bundles' tests share (Gradescope's, PrairieLearn's and GitHub Classroom's): the course rubric they bundle,
and a site layer that stands in for torch in their fresh venvs.

A fresh venv pays about a minute for torch (700 MB unpacked and compiled) on this machine's two cores. The bundles'
setup scripts run unchanged in a fresh venv, but one seeded first with a .pth line naming the layer: hard links
to this venv's site-packages (torch and every dependency of the grader), without the grader itself. pip then finds
torch at the pin and the grader's dependencies already there, as a warm image cache would, and installs only the
grader's wheel, from the bundle. Hard links, not symbolic ones: the sandbox lets a worker read the venv's own
folders, and a symbolic link would lead it out of them. Built once per test run (conftest.built_once).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from conftest import ROOT, built_once

HIDDEN = "reference_match"  # gradients depends on it: a student build grades neither
LEFT_OUT = ("attention_grader", "__editable__", "grader", "pip", "_distutils_hack")  # what pip must install itself


def course(folder: Path, checks: tuple[str, ...] = (), **limits) -> Path:
    """chapter5 as a teacher's own rubric file, with HIDDEN hidden, only `checks` (all when none are named) and
    some [limits] changed."""
    lines = (ROOT / "rubrics" / "chapter5.toml").read_text().splitlines()
    if checks:
        sections = [i for i, line in enumerate(lines) if line.startswith("[")] + [len(lines)]
        dropped = {i for at, end in zip(sections, sections[1:]) if lines[at].startswith("[checks.")
                   and lines[at][len("[checks."):-1] not in checks for i in range(at, end)}
        lines = [line for i, line in enumerate(lines) if i not in dropped]
    for key, value in limits.items():
        (at,) = [i for i, line in enumerate(lines) if line.startswith(f"{key} = ")]
        lines[at] = f"{key} = {value}"
    lines.insert(lines.index(f"[checks.{HIDDEN}]") + 1, 'visibility = "hidden"')
    path = folder / "course.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


QUICK = {"call_timeout": 1, "total_timeout": 20}  # so that an endless loop ends soon
FEW = ("loads", "output_shape", "content_dependent", "future_weights_zero", "sqrt_scaling", HIDDEN, "gradients", "policy")


def layer() -> Path:
    """The folder of hard links that stands in for torch and the grader's dependencies."""
    with built_once("site-layer") as (folder, fresh):
        if fresh:
            site = Path(sysconfig.get_paths()["purelib"])
            keep = [p for p in sorted(site.iterdir()) if not p.name.startswith(LEFT_OUT) and p.suffix != ".pth"]
            (folder / "site").mkdir()
            done = subprocess.run(["cp", "-al", *map(str, keep), str(folder / "site")], capture_output=True, text=True)
            if done.returncode != 0:  # another file system, or links not allowed: copies then
                shutil.rmtree(folder / "site")
                shutil.copytree(site, folder / "site", symlinks=True, ignore=lambda d, names: [
                    n for n in names if d == str(site) and (n.startswith(LEFT_OUT) or n.endswith(".pth"))])
    return folder / "site"


def seed(venv: Path) -> None:
    """Make `venv` (not yet created: `python -m venv` keeps what is there) see the layer after its own packages."""
    site = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    site.mkdir(parents=True, exist_ok=True)
    (site / "zz_layer.pth").write_text(f"{layer()}\n")


BASE_PYTHON = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"  # not a venv's


def python_bin(folder: Path) -> Path:
    """A folder holding `python` and `python3` (this Python, outside any venv), for a PATH with nothing else of ours."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("python", "python3"):
        if not (folder / name).exists():
            os.symlink(BASE_PYTHON, folder / name)
    return folder


def site_packages(venv: Path) -> Path:
    return next(venv.glob("lib/python*/site-packages"))
