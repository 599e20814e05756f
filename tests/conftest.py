from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SUBMISSIONS = ROOT / "submissions"
CH5_DIR = SUBMISSIONS / "chapter5"

_grades: dict = {}


@pytest.fixture(scope="session")
def grade_of():
    """Grade a submission once per test session (grading is deterministic, so caching loses nothing)."""
    from grader import rubric, subject
    from grader.grading import Grading

    subject.warm_up()

    def grade(path, rubric_name: str = "chapter5", **kw):
        key = (str(path), rubric_name, tuple(sorted(kw.items())))
        if key not in _grades:
            _grades[key] = Grading(path, rubric.load(rubric_name), **kw).finish()
        return _grades[key]

    return grade


def failed(grade) -> set[str]:
    return {o.id for o in grade.outcomes if o.status == "failed"}
