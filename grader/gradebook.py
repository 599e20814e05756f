"""The batch command's memory and its exports: an SQLite gradebook keyed by content hashes, and the files a teacher
takes away (gradebook.csv, and per submission results.json and junit.xml), always rewritten from the database.

A row is committed the moment its submission is graded, so a run killed at any point loses at most the
submissions that were being graded; every file is written atomically, so none is ever half written.
(The feedback pages and their pictures are drawn once, by the grader process, before the row is committed.)
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import sqlite3
import stat
import xml.etree.ElementTree as ET
from dataclasses import fields
from pathlib import Path

from grader import report
from grader.grading import Grade, Outcome

DB_NAME = "gradebook.sqlite"


# -- keys ----------------------------------------------------------------------------------------------------
def submission_hash(path: Path) -> str:
    """sha256 of the path as given (the replay commands in the feedback name it) and of the file, or of a folder's
    files (relative path and content, sorted); symlinks inside count by their target's name and are never
    followed, so a link to /dev/zero cannot hang the batch."""
    h = hashlib.sha256(f"{path}\n".encode())
    root = Path(path)
    entries = [root] if not root.is_dir() else sorted(
        p for p in root.rglob("*") if "__pycache__" not in p.relative_to(root).parts
    )
    for p in entries:
        rel = p.relative_to(root).as_posix() if p != root else p.name
        st = os.lstat(p) if p != root else os.stat(p)
        if stat.S_ISREG(st.st_mode):
            h.update(f"file {rel} {st.st_size}\n".encode())
            with open(p, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
        elif stat.S_ISLNK(st.st_mode):
            h.update(f"link {rel} {os.readlink(p)}\n".encode())
        elif not stat.S_ISDIR(st.st_mode):
            h.update(f"special {rel}\n".encode())
    return h.hexdigest()[:32]


def grader_hash(rubric, loading: dict) -> str:
    """The rubric (its content and the name it was given by: the replay commands in the feedback name it), how code
    is read (--defs-only, --notebook-mode) and the grader's version. Not the grader's source: a local edit of a
    check needs --force to apply to graded work."""
    from importlib.metadata import PackageNotFoundError, version

    from grader.rubric import content_hash

    try:
        release = version("attention-grader")
    except PackageNotFoundError:  # run from a source tree that was never installed
        release = "source"
    how = json.dumps(loading, sort_keys=True)
    return hashlib.sha256(f"{content_hash(rubric)} {rubric.origin} {how} {release}\n".encode()).hexdigest()[:32]


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
        found = {}
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


# -- exports -------------------------------------------------------------------------------------------------
def problems(grade: Grade) -> str:
    """Why a submission could not be graded in full: it did not load, or its worker timed out or died."""
    loads = next((o for o in grade.outcomes if o.id == "loads"), None)
    if loads is not None and loads.status == "failed":
        return "loads failed: " + loads.message.splitlines()[0]
    lost = [o for o in grade.outcomes if o.status == "failed" and _lost(o.message)]
    return "; ".join(f"{o.id}: {o.message.splitlines()[0]}" for o in lost)


# How the messages of subject.WorkerLost and of a grader error (grading.Grading._run) begin: not a verdict on the
# student's function but a submission that could not be graded in full.
_LOST = ("timed out after", "the submission used up its total time limit", "the worker ", "memory limit exceeded",
         "grader error while checking")


def _lost(message: str) -> bool:
    return message.startswith(_LOST)


def csv_text(grades: list[Grade], check_ids: list[str]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["submission", "total", *check_ids, "errors"])
    for g in grades:
        pts = {o.id: o.points for o in g.outcomes}
        w.writerow([g.submission, report.points(g.score), *(report.points(pts.get(c, 0)) for c in check_ids), problems(g)])
    return buf.getvalue()


def junit_xml(grade: Grade) -> str:
    """One testsuite, one testcase per check; a failure's message is the student's feedback."""
    suite = ET.Element("testsuite", name=grade.submission, tests=str(len(grade.outcomes)),
                       failures=str(sum(o.status == "failed" for o in grade.outcomes)),
                       skipped=str(sum(o.status not in ("passed", "failed") for o in grade.outcomes)))
    props = ET.SubElement(suite, "properties")
    for key, value in (("rubric", grade.rubric), ("score", report.points(grade.score)), ("max_score", report.points(grade.max_score))):
        ET.SubElement(props, "property", name=key, value=value)
    for o in grade.outcomes:
        # CI tools read the classname's dots as packages: "chapter5.alice_py", not a class "py" in "chapter5.alice"
        case = ET.SubElement(suite, "testcase", classname=f"{grade.rubric}.{grade.submission.replace('.', '_')}", name=o.id)
        text = report.feedback(o, grade.diagnosis)
        if o.status == "failed":
            ET.SubElement(case, "failure", message=text.splitlines()[0] if text else "failed").text = text
        elif o.status != "passed":
            ET.SubElement(case, "skipped", message=o.message.splitlines()[0] if report.reveals(o) and o.message else o.status)
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def export(out: Path, grades: list[Grade], check_ids: list[str]) -> None:
    """results.json, junit.xml and the gradebook, from the stored grades."""
    for g in grades:
        folder = out / g.submission
        report.write_json(folder / "results.json", g)  # the plugin's own writer: the same file as --grade-json
        report.write_atomic(folder / "junit.xml", junit_xml(g))
    report.write_atomic(out / "gradebook.csv", csv_text(grades, check_ids))
