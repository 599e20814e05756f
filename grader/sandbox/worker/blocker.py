"""The import blocker: the grader's own packages (its reference above all) cannot be imported by student code, and
each attempt is recorded for the report. The private view and Landlock hide their files too; this also covers
what the fork server already imported."""

from __future__ import annotations

import importlib.abc
import sys

BLOCKED = ("reference", "grader")


class Blocker(importlib.abc.MetaPathFinder):
    """Makes the grader's own packages unimportable from student code."""

    attempts: list[str] = []

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            self.attempts.append(name)
            raise ImportError(f"importing {name!r} is not allowed in a submission")
        return None


def seal() -> None:
    for name in list(sys.modules):
        if name.split(".")[0] in BLOCKED:
            del sys.modules[name]
    sys.meta_path.insert(0, Blocker())
    sys.argv = ["submission"]
