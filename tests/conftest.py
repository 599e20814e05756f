from __future__ import annotations

import atexit
import fcntl
import hashlib
import os
import pickle
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest

# Set once by the first pytest process (pytest-xdist's workers inherit them): example plans are recorded once per
# test session, for every process and every command it starts, and each sample is graded once (grade_of).
# ATTENTION_GRADER_TEST_PUBLIC: what built_once(public=True) builds, in a folder every uid may enter (as root, workers
# run under uids of their own and read the venv a bundle's test installs, as they would in /autograder).
for _name, _prefix in (("ATTENTION_GRADER_CACHE", "attention-grader-plans-"),
                       ("ATTENTION_GRADER_TEST_GRADES", "attention-grader-test-grades-"),
                       ("ATTENTION_GRADER_TEST_PUBLIC", "attention-grader-test-public-")):
    if _name not in os.environ:
        os.environ[_name] = tempfile.mkdtemp(prefix=_prefix)
        atexit.register(shutil.rmtree, os.environ[_name], ignore_errors=True)
        if _name == "ATTENTION_GRADER_TEST_PUBLIC":
            os.chmod(os.environ[_name], 0o755)

ROOT = Path(__file__).resolve().parents[1]
SUBMISSIONS = ROOT / "submissions"
CH5_DIR = SUBMISSIONS / "chapter5"

_grades: dict = {}


@pytest.fixture(scope="session")
def grade_of():
    """Grade a submission once per test session (grading is deterministic, so caching loses nothing)."""
    from grader.grading import rubric
    from grader.grading.engine import Grading
    from grader.sandbox import spawn
    from grader.submission.reading import Reading

    spawn.warm_up(meta=True)  # hundreds of workers: each inherits the meta kernels instead of importing them

    def grade(path, rubric_name: str = "chapter5", **kw):
        """kw: how the code is read (defs_only, notebook_mode). The pytest processes of one run share the grades
        through files: the first to ask grades, the others wait."""
        key = (str(path), rubric_name, tuple(sorted(kw.items())))
        if key not in _grades:
            with built_once(hashlib.sha256(repr(key).encode()).hexdigest()) as (folder, fresh):
                if fresh:
                    done = Grading(path, rubric.load(rubric_name), reading=Reading(**kw)).finish()
                    (folder / "grade.pickle").write_bytes(pickle.dumps(done))
            _grades[key] = pickle.loads((folder / "grade.pickle").read_bytes())
        return _grades[key]

    return grade


@pytest.fixture
def hypothesis_runs(monkeypatch) -> list[int]:
    """A list that grows by one each time a check runs hypothesis (checks.replay.given) during the test."""
    from grader.checks import replay

    runs: list[int] = []
    given = replay.given
    monkeypatch.setattr(replay, "given", lambda *a, **kw: runs.append(1) or given(*a, **kw))
    return runs


@contextmanager
def built_once(name: str, public: bool = False):
    """(folder, fresh): a folder that the first pytest process of the run to get here builds, inside the block
    when `fresh`, and the others then use as it was left (so only what tests do not change belongs there, or what
    they change only while holding `taking_turns`). public: in a folder that every uid may enter."""
    folder = Path(os.environ["ATTENTION_GRADER_TEST_PUBLIC" if public else "ATTENTION_GRADER_TEST_GRADES"]) / name
    with open(folder.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        fresh = not (folder / ".built").exists()
        if fresh:  # nothing, or what a build that failed left
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
        yield folder, fresh
        (folder / ".built").touch()


_turns: set[str] = set()


@contextmanager
def taking_turns(folder: Path):
    """Hold `folder` (one that built_once built) against the run's other pytest processes, for tests that change
    what is in it and read the change back; re-entrant within a process."""
    key = str(folder)
    if key in _turns:
        yield
        return
    with open(folder.with_suffix(".turn"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _turns.add(key)
        try:
            yield
        finally:
            _turns.discard(key)


def load_factor() -> float:
    """How much longer than on a quiet machine wall time runs now (the 1-minute load per core), for the few tests
    that bound a wall time: deadlines count the worker's own time, which ends within client.MAX_STRETCH times its
    length, so no bound needs more."""
    import os

    from grader.sandbox.client import MAX_STRETCH

    return min(MAX_STRETCH, max(1.0, (os.getloadavg()[0] + 1) / (os.cpu_count() or 1)))


def identical(a, b) -> bool:
    """Equal, tensors bit for bit (NaN where the other has NaN), containers of the same type."""
    import torch

    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape):
            return False
        return torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(), b.nan_to_num())
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(map(identical, a, b))
    if isinstance(a, dict):
        return type(b) is dict and a.keys() == b.keys() and all(identical(a[k], b[k]) for k in a)
    return a == b


def failed(grade) -> set[str]:
    return {o.id for o in grade.outcomes if o.status == "failed"}


def assert_full_marks(grade) -> None:
    assert failed(grade) == set(), [o.message for o in grade.outcomes if o.status == "failed"]
    assert grade.score == grade.max_score == 100


def assert_fails_exactly(grade, must_fail: set[str], words: list[str]) -> None:
    """A planted bug fails exactly these checks, and their feedback names the cause in these words."""
    assert failed(grade) == must_fail
    text = " ".join(f"{o.message} {o.misconception} {o.hint}" for o in grade.outcomes if o.status == "failed").lower()
    for word in words:
        assert word.lower() in text, f"{grade.submission}: feedback does not mention {word!r}"
    assert grade.score < grade.max_score


def assert_every_check_can_fail(expected: dict, rubric_name: str) -> None:
    from grader.grading.rubric import load

    caught = set().union(*(must for must, _ in expected.values()))
    assert {cid for cid in load(rubric_name).checks if cid != "loads"} <= caught
