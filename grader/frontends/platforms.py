"""What the bundles for other platforms (PrairieLearn, GitHub Classroom) share: the torch they pin, the rubric's
extra packages, how long a grading may take, and writing a folder of files with their modes.

The torch pin and its CPU index are Gradescope's (`autograder.torch_pin`, `autograder.TORCH_INDEX`): every
platform grades with the torch the teacher grades with.
"""

from __future__ import annotations

import math
import shlex
import sys
from pathlib import Path

from grader.frontends.autograder import TORCH_INDEX, torch_pin

START_S = 30  # a grading's own start before the first check: interpreter, torch, the fork server, the walls probe

__all__ = ["TORCH_INDEX", "torch_pin", "packages", "pip_args", "python_version", "seconds", "minutes", "write_folder",
           "CannotGrade", "graded"]


class CannotGrade(Exception):
    """Why the grader cannot grade here at all, one line: a bad rubric, a sandbox wall that does not go up, a course
    secret named but unusable."""


def packages(rubric) -> list[str]:
    """The pip requirements the rubric says student code needs (its `packages`, where the rubric has them)."""
    return [str(p) for p in getattr(rubric, "packages", None) or []]


def pip_args(requirements: list[str]) -> str:
    """Requirements as shell words."""
    return " ".join(shlex.quote(r) for r in requirements)


def python_version() -> str:
    """The teacher's Python, major.minor: the platform's is chosen to match it, so the pinned torch has a wheel."""
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def seconds(rubric) -> int:
    """How long one whole grading may take under the rubric's limits: the start, loading the file, the worker's
    whole budget, and as much again for the grader's own side of it (hypothesis, comparisons, the diagnosis)."""
    limits = rubric.limits
    return math.ceil(START_S + limits.load_timeout + 2 * limits.total_timeout)


def minutes(rubric) -> int:
    return math.ceil(seconds(rubric) / 60)


def write_folder(out: Path, files: dict[str, str | bytes], executable: tuple[str, ...] = ()) -> None:
    """Write `files` (path in `out` -> text or bytes) into `out`, the `executable` ones with mode 755, and remove
    any other wheel of this grader that an earlier bundle left there."""
    out.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        for stale in path.parent.glob("attention_grader-*.whl") if name.endswith(".whl") else ():
            if stale.name != path.name:
                stale.unlink()
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data, encoding="utf-8")
        path.chmod(0o755 if name in executable else 0o644)


def graded(args):
    """(the rubric, the grade) of the submission at args.path with args.rubric, graded as `attention-grader check`
    grades it (the walls checked first, as the pytest plugin does); CannotGrade with the reason."""
    from grader.frontends import options
    from grader.frontends.startup import CannotStart, start

    try:
        rubric = start(args.rubric)
    except CannotStart as e:
        raise CannotGrade(str(e)) from None
    from grader.grading.engine import Grading

    grading = Grading(args.path, rubric, reading=options.reading(vars(args).get))
    return rubric, grading.finish()
