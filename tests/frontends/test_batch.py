"""`attention-grader grade`, run as a teacher would (a subprocess): gradebook and exports, the same results.json as
the plugin, resuming after kill -9, unchanged re-runs, --force, determinism and bad input."""

from __future__ import annotations

import csv
import json
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest

from conftest import CH5_DIR, load_factor

from grader.grading.rubric import load

SAMPLES = ["correct_basic.py", "bug_zero_fill.py", "correct_folder"]
BROKEN = "def attention(q, k, v):\n    return (\n"  # a syntax error: loads fails, nothing else runs


def grade_cmd(*args) -> list[str]:
    return [sys.executable, "-m", "grader.frontends.cli", "grade", *map(str, args)]


def grade(*args) -> subprocess.CompletedProcess:
    return subprocess.run(grade_cmd(*args), capture_output=True, text=True, timeout=600)


def files(out) -> dict[str, bytes]:
    """Every file under `out` but the database: what two runs must agree on byte for byte."""
    return {
        str(p.relative_to(out)): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and not p.name.startswith("gradebook.sqlite")
    }


@pytest.fixture(scope="module")
def klass(tmp_path_factory):
    folder = tmp_path_factory.mktemp("class")
    for name in SAMPLES:
        src = CH5_DIR / name
        shutil.copytree(src, folder / name) if src.is_dir() else shutil.copy(src, folder / name)
    (folder / "broken.py").write_text(BROKEN)
    (folder / "README.md").write_text("not a submission\n")
    (folder / ".hidden.py").write_text("not a submission either\n")
    return folder


@pytest.fixture(scope="module")
def graded(klass, tmp_path_factory):
    """One uninterrupted run with two grader processes: (its output folder, its result)."""
    out = tmp_path_factory.mktemp("grades")
    result = grade(klass, "--rubric", "chapter5", "--out", out, "--workers", "2")
    assert result.returncode == 0, result.stderr
    return out, result


def test_gradebook_has_one_row_per_submission_and_a_column_per_check(graded):
    out, result = graded
    rubric = load("chapter5")
    rows = list(csv.reader((out / "gradebook.csv").open()))
    assert rows[0] == ["submission", "total", *rubric.order(), "errors"]
    book = {r[0]: dict(zip(rows[0], r)) for r in rows[1:]}
    assert list(book) == sorted(SAMPLES + ["broken.py"])  # README and hidden files are not submissions
    for name, row in book.items():
        data = json.loads((out / name / "results.json").read_text())
        assert float(row["total"]) == data["score"]
        assert {c: float(row[c]) for c in rubric.order()} == {t["extra_data"]["check_id"]: t["score"] for t in data["tests"]}
    for name in ("correct_basic.py", "correct_folder"):
        assert float(book[name]["total"]) == rubric.max_score and book[name]["errors"] == ""
    zero_fill = book["bug_zero_fill.py"]
    assert float(zero_fill["future_weights_zero"]) == float(zero_fill["mask_fill_value"]) == 0
    assert 0 < float(zero_fill["total"]) < rubric.max_score
    assert float(book["broken.py"]["total"]) == 0 and book["broken.py"]["errors"].startswith("loads failed:")
    # the terminal gets the gradebook table and the summary
    assert "bug_zero_fill.py" in result.stdout and "future_weights_zero" in result.stdout
    assert "## Most-failed checks" in result.stdout and "`broken.py`" in result.stdout


def test_exports_per_submission_and_class_summary(graded):
    out, _ = graded
    for name in SAMPLES + ["broken.py"]:
        assert {"results.json", "junit.xml", "feedback.md", "feedback.html"} <= {p.name for p in (out / name).iterdir()}
    suite = ET.parse(out / "bug_zero_fill.py" / "junit.xml").getroot().find("testsuite")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert list(cases) == load("chapter5").order()
    assert cases["future_weights_zero"].find("failure") is not None
    assert cases["loads"].find("failure") is None and int(suite.get("failures")) >= 2
    summary = (out / "summary.md").read_text()
    assert "## Score distribution" in summary and "## Most common diagnosed mistakes" in summary
    assert "`future_weights_zero` | 1/4" in summary
    assert (out / "histogram.png").read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("name", ["bug_zero_fill.py", "correct_folder"])
def test_results_json_is_the_plugins(graded, klass, pytester, name):
    out, _ = graded
    pytester.runpytest_subprocess("--submission", str(klass / name), "--rubric", "chapter5", "--grade-json", "r.json")
    assert (pytester.path / "r.json").read_text() == (out / name / "results.json").read_text()


def test_unchanged_rerun_grades_nothing_and_keeps_every_file(graded, klass):
    out, _ = graded
    before = files(out)
    t = time.monotonic()
    result = grade(klass, "--rubric", "chapter5", "--out", out)
    assert result.returncode == 0, result.stderr
    assert "0 to grade" in result.stderr and "grader processes" not in result.stderr
    assert time.monotonic() - t < 30 * load_factor()
    assert files(out) == before


def test_killed_run_resumes_with_only_the_missing_and_ends_as_an_uninterrupted_run(graded, klass, tmp_path):
    out = tmp_path / "grades"
    proc = subprocess.Popen(grade_cmd(klass, "--out", out, "--workers", "1"), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    db = out / "gradebook.sqlite"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if db.exists() and _rows(db):
            break
        time.sleep(0.2)
    graders = _children(proc.pid)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = _rows(db)
    assert 1 <= len(done) < 4, "the run finished before it could be killed"
    assert graders and _gone(graders), "grader processes outlived the batch"

    result = grade(klass, "--out", out, "--workers", "2")
    assert result.returncode == 0, result.stderr
    assert f"{4 - len(done)} to grade, {len(done)} unchanged" in result.stderr
    assert files(out) == files(graded[0])  # two runs, byte-identical files


def test_changed_submission_is_regraded_and_force_regrades_all(tmp_path):
    folder, out = tmp_path / "class", tmp_path / "grades"
    folder.mkdir()
    for name in ("a.py", "b.py"):  # cheap to grade: neither loads
        (folder / name).write_text(BROKEN)
    assert "2 to grade, 0 unchanged" in grade(folder, "--out", out).stderr
    (folder / "b.py").write_text(BROKEN + "# changed\n")
    result = grade(folder, "--out", out)
    assert result.returncode == 0 and "1 to grade, 1 unchanged" in result.stderr
    result = grade(folder, "--out", out, "--force")
    assert result.returncode == 0 and "2 to grade, 0 unchanged" in result.stderr


def test_timeouts_are_listed_as_errors(tmp_path):
    rubric = tmp_path / "quick.toml"
    rubric.write_text(
        'name = "quick"\nexercise = "chapter5"\n[limits]\ncall_timeout = 0.5\ntotal_timeout = 2\n'
        '[checks.loads]\npoints = 0\n[checks.output_shape]\npoints = 5\ndepends = ["loads"]\n'
    )
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "sleeper.py").write_text("import time\ndef attention(q, k, v):\n    time.sleep(60)\n")
    shutil.copy(CH5_DIR / "correct_basic.py", folder)
    out = tmp_path / "grades"
    result = grade(folder, "--rubric", rubric, "--out", out)
    assert result.returncode == 0, result.stderr
    book = {r["submission"]: r for r in csv.DictReader((out / "gradebook.csv").open())}
    assert book["sleeper.py"]["errors"].startswith("output_shape: timed out after 0.5 s")
    assert book["correct_basic.py"]["errors"] == "" and book["correct_basic.py"]["total"] == "5"
    assert "`sleeper.py` | output_shape: timed out" in (out / "summary.md").read_text()


@pytest.mark.parametrize("make_args, says", [
    (lambda tmp: [tmp / "missing"], "not a folder"),
    (lambda tmp: [(tmp / "a.py").write_text(BROKEN) and tmp, "--rubric", "no_such_rubric"], "no_such_rubric"),
    (lambda tmp: [tmp], "no submissions"),
    (lambda tmp: [tmp, "--workers", "0"], "--workers"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, make_args, says):
    (tmp_path / "README.md").write_text("only notes here\n")
    result = grade(*make_args(tmp_path), "--out", tmp_path / "out")
    assert result.returncode == 2
    assert says in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def _rows(db) -> list[str]:
    try:
        with sqlite3.connect(db) as con:
            return [r[0] for r in con.execute("SELECT submission FROM grades")]
    except sqlite3.Error:
        return []


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def _gone(pids: list[int], wait: float = 20) -> bool:
    deadline = time.monotonic() + wait
    while any(_alive(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
