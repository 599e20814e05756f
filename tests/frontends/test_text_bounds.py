"""The grader process's own work on a submission's text is bounded (issue 29, point 4): a short file nested deeper
than Python's parser goes costs the `loads` check in one line, through every command, and the class insight
still compares the rest of the class."""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CH5_DIR
from test_batch import grade

from grader.frontends.cli import main

PYTEST = [str(Path(sys.executable).with_name("pytest"))]  # the console script, as a teacher runs it
RUBRIC = """name = "bounds"
exercise = "chapter5"
[hypothesis]
max_examples = 2
[checks.loads]
points = 0
[checks.output_shape]
points = 5
depends = ["loads"]
[checks.future_weights_zero]
points = 10
depends = ["loads"]
"""
# 6 KB of valid-looking Python each: a left-leaning sum 3,000 terms deep, 5,000 unary minus signs
DEEP = {"sum": "X = " + "+".join(["1"] * 3000) + "\n", "minus": "X = " + "-" * 5000 + "1\n"}
SAID = "too deeply nested to read"


@pytest.fixture
def rubric(tmp_path) -> Path:
    path = tmp_path / "bounds.toml"
    path.write_text(RUBRIC)
    return path


@pytest.mark.parametrize("kind", sorted(DEEP))
@pytest.mark.parametrize("defs_only", [False, True])
def test_check_says_too_deeply_nested_in_one_line(tmp_path, rubric, capsys, kind, defs_only):
    sub = tmp_path / "attention.py"
    sub.write_text(DEEP[kind])
    code = main(["check", str(sub), "--rubric", str(rubric), *(["--defs-only"] if defs_only else [])])
    out, err = capsys.readouterr()
    assert code == 1, out + err
    assert "FAIL loads" in out and SAID in out and "attention.py holds an expression" in out
    assert "Traceback" not in out + err and "RecursionError" not in out + err


def test_the_plugin_fails_loads_in_one_line_not_every_check(tmp_path, rubric):
    sub = tmp_path / "attention.py"
    sub.write_text(DEEP["sum"])
    (tmp_path / "run").mkdir()
    done = subprocess.run(PYTEST + ["--submission", str(sub), "--rubric", str(rubric), "-q"], cwd=tmp_path / "run",
                          capture_output=True, text=True, timeout=300)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "RecursionError" not in out and "Traceback" not in out
    failed = [line for line in out.splitlines() if line.startswith("FAILED")]
    assert len(failed) == 1 and "::loads" in failed[0] and SAID in failed[0], out


def test_grade_grades_the_class_and_leaves_that_file_out_of_the_insight(tmp_path, rubric):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "deep.py").write_text(DEEP["minus"])
    shutil.copy(CH5_DIR / "correct_basic.py", folder / "good.py")
    out = tmp_path / "grades"
    done = grade(folder, "--out", out, "--workers", "2", "--rubric", rubric)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    book = {row["submission"]: row for row in csv.DictReader((out / "gradebook.csv").open())}
    assert sorted(book) == ["deep.py", "good.py"]
    assert book["good.py"]["total"] == "15" and book["deep.py"]["total"] == "0"
    assert SAID in (out / "summary.md").read_text()
    assert "Not compared (no fingerprint): `deep.py` (too deeply nested to read)." in (out / "summary.md").read_text()
    assert (out / "class.html").is_file()
