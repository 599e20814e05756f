"""The batch command's memory: an SQLite gradebook keyed by content hashes, from which every export is rewritten.

A row is committed the moment its submission is graded, so a run killed at any point loses at most the
submissions that were being graded. (The feedback pages and their pictures are drawn once, by the grader
process, before the row is committed.)
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import fields
from pathlib import Path

from grader.grading.outcome import Grade, Outcome
from grader.grading.rubric import content_hash

DB_NAME = "gradebook.sqlite"


# -- keys ----------------------------------------------------------------------------------------------------
def submission_hash(staged) -> str:
    """sha256 of the path as given (the replay commands in the feedback name it) and of the submission's staged
    copy (submission.staging: what grading reads), or of why it could not be staged."""
    return hashlib.sha256(f"{staged.shown}\n{staged.digest()}\n".encode()).hexdigest()[:32]


def grader_hash(rubric, loading: dict, draws) -> str:
    """The rubric (its content and the name it was given by: the replay commands in the feedback name it), how code
    is read (--defs-only, --notebook-mode), the draws (checks.draws: another course secret draws other examples)
    and the grader's version. Not the grader's source: a local edit of a check needs --force to apply to graded
    work."""
    how = json.dumps(loading, sort_keys=True)
    return hashlib.sha256(f"{content_hash(rubric)} {rubric.origin} {how} {draws.key} {release()}\n".encode()).hexdigest()[:32]


def release() -> str:
    """The grader's installed version (a Dask worker compares its own with the batch command's)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("attention-grader")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "source"


# -- the store -----------------------------------------------------------------------------------------------
class Store:
    """submission name -> (content hash, grader hash, grade as JSON). One writer: the batch command's process."""

    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(folder / DB_NAME, isolation_level=None)  # autocommit: each put is durable
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS grades (submission TEXT PRIMARY KEY, content TEXT NOT NULL,"
            " grader TEXT NOT NULL, grade TEXT NOT NULL)"
        )

    def current(self, name: str, content: str, grader: str) -> bool:
        row = self.db.execute("SELECT content, grader FROM grades WHERE submission = ?", (name,)).fetchone()
        return row == (content, grader)

    def put(self, name: str, content: str, grader: str, grade: dict) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO grades VALUES (?, ?, ?, ?)", (name, content, grader, json.dumps(grade, sort_keys=True))
        )

    def grades(self, names: list[str]) -> list[Grade]:
        """The stored grades of these submissions, in the order given."""
        found: dict[str, str] = {}
        for i in range(0, len(names), 500):  # SQLite's limit on bound parameters
            chunk = names[i:i + 500]
            marks = ",".join("?" * len(chunk))
            found.update(self.db.execute(f"SELECT submission, grade FROM grades WHERE submission IN ({marks})", chunk))
        return [to_grade(json.loads(found[n])) for n in names if n in found]

    def close(self) -> None:
        self.db.close()


def to_grade(data: dict) -> Grade:
    """A Grade from its stored dict (fields the current Grade does not know are dropped)."""
    known = {f.name for f in fields(Grade)}
    okeys = {f.name for f in fields(Outcome)}
    outcomes = [Outcome(**{k: v for k, v in o.items() if k in okeys}) for o in data["outcomes"]]
    return Grade(**{**{k: v for k, v in data.items() if k in known}, "outcomes": outcomes})
