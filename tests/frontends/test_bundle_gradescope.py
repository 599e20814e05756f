"""`attention-grader bundle gradescope`, end to end without Gradescope: the zip unpacks into a temporary root that
stands in for /autograder (AUTOGRADER_ROOT), setup.sh installs into a fresh venv from the zip alone (torch from the
site layer, see platform_env), and
run_autograder grades a correct, a buggy, a hostile, a missing and a broken submission. Each results.json is
valid against Gradescope's documented format and the same bytes as `pytest --submission --grade-json`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict

import platform_env
from conftest import CH5_DIR, ROOT, SUBMISSIONS, built_once, taking_turns

from grader.frontends import autograder

HIDDEN = "reference_match"


# -- Gradescope's results.json, as its autograder specification documents it --------------------------------
class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


Visibility = Literal["hidden", "after_due_date", "after_published", "visible"]
Format = Literal["text", "html", "simple_format", "md", "ansi"]


class GradescopeTest(_Doc):
    score: float | int | None = None
    max_score: float | int | None = None
    status: Literal["passed", "failed"] | None = None
    name: str | None = None
    name_format: Format | None = None
    number: str | None = None
    output: str | None = None
    output_format: Format | None = None
    tags: list[str] | None = None
    visibility: Visibility | None = None
    extra_data: dict | None = None


class GradescopeResults(_Doc):
    score: float | int | None = None
    max_score: float | int | None = None  # not in the specification's example; Gradescope takes the tests' sum
    execution_time: float | int | None = None
    output: str | None = None
    output_format: Format | None = None
    test_output_format: Format | None = None
    test_name_format: Format | None = None
    visibility: Visibility | None = None
    stdout_visibility: Visibility | None = None
    extra_data: dict | None = None
    tests: list[GradescopeTest] | None = None
    leaderboard: list[dict] | None = None


def valid(data: dict) -> GradescopeResults:
    results = GradescopeResults.model_validate(data)
    assert results.score is not None or all(t.score is not None for t in results.tests or [])  # the spec's rule
    return results


# -- the autograder, in a temporary /autograder ---------------------------------------------------------------
def _rubric(tmp: Path) -> Path:
    """chapter5 with one check hidden and short call limits, so that the endless loop ends soon."""
    text = (ROOT / "rubrics" / "chapter5.toml").read_text()
    text = text.replace("call_timeout = 5 ", "call_timeout = 1 ").replace("total_timeout = 60 ", "total_timeout = 20 ")
    lines = text.splitlines()
    at = lines.index(f"[checks.{HIDDEN}]")
    lines.insert(at + 1, 'visibility = "hidden"')
    path = tmp / "course.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def gradescope():
    """The zip and a /autograder that its setup.sh installed, built once per test run (conftest.built_once) in a
    folder every uid may enter: as root, the workers run under uids of their own and must be able to read the venv's
    site-packages, as they can in Gradescope's /autograder. The run's pytest processes take turns with submission/
    and results/ (conftest.taking_turns)."""
    with built_once("gradescope", public=True) as (folder, fresh):
        if fresh:
            build(folder)
    root = folder / "root"
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "TORCH_INDEX_URL": "", "PYTHONPATH": ""}
    return {"zip": folder / "autograder.zip", "root": root, "env": env}


def build(folder: Path) -> None:
    rubric = _rubric(folder)
    out = folder / "autograder.zip"
    done = subprocess.run([sys.executable, "-m", "grader.frontends.cli", "bundle", "gradescope", "--rubric", str(rubric),
                           "-o", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    root = folder / "root"
    with zipfile.ZipFile(out) as z:
        z.extractall(root / "source")
    for name in ("setup.sh", "run_autograder"):  # zipfile drops the mode bits that Gradescope's unzip keeps
        (root / "source" / name).chmod(0o755)
    # setup.sh runs unchanged; its fresh venv sees torch and the grader's dependencies through the site layer, as
    # PrairieLearn's and Classroom's do, so pip checks the torch pin and installs the grader's wheel from the zip
    platform_env.seed(root / "venv")
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_PYTHON": str(platform_env.BASE_PYTHON),
           "TORCH_INDEX_URL": "", "PYTHONPATH": ""}
    setup = subprocess.run(["bash", str(root / "source" / "setup.sh")], env=env, capture_output=True, text=True,
                           timeout=900, cwd=root)
    assert setup.returncode == 0, setup.stdout[-3000:] + setup.stderr[-3000:]


_runs: dict = {}


def graded(gs, submission: Path | None) -> tuple[dict, bytes]:
    """run_autograder's results for `submission`, from an earlier run of it if there was one (it is deterministic)."""
    return _runs[submission] if submission in _runs else run_autograder(gs, submission)


def run_autograder(gs, submission: Path | None) -> tuple[dict, bytes]:
    """Put `submission` (a file or a folder's files; None: nothing) into submission/ and run run_autograder."""
    root = gs["root"]
    target = root / "submission"
    with taking_turns(root):
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir()
        if submission is not None and submission.is_dir():
            shutil.copytree(submission, target, dirs_exist_ok=True)
        elif submission is not None:
            shutil.copy(submission, target / submission.name)
        done = subprocess.run([str(root / "source" / "run_autograder")], env=gs["env"], capture_output=True,
                              text=True, timeout=600, cwd=root)
        assert done.returncode == 0, done.stderr[-3000:]
        raw = (root / "results" / "results.json").read_bytes()
    _runs[submission] = json.loads(raw), raw
    return _runs[submission]


def plugin_json(gs, tmp_path) -> bytes:
    """What the teacher's own `pytest --submission --grade-json` writes for the same folder and rubric."""
    root = gs["root"]
    out = tmp_path / "plugin.json"
    subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--submission", str(root / "submission"),
                    "--rubric", str(root / "source" / "rubric.toml"), "--grade-json", str(out)],
                   capture_output=True, text=True, timeout=600, cwd=tmp_path)
    return out.read_bytes()


def test_the_zip_holds_the_scripts_the_rubric_and_a_wheel_with_the_reference(gradescope):
    with zipfile.ZipFile(gradescope["zip"]) as z:
        names = z.namelist()
        assert {"setup.sh", "run_autograder", "rubric.toml"} <= set(names)
        assert z.getinfo("run_autograder").external_attr >> 16 & 0o111
        (whl,) = [n for n in names if n.endswith(".whl")]
        assert 'visibility = "hidden"' in z.read("rubric.toml").decode()
    venv = gradescope["root"] / "venv"
    site = next(venv.glob("lib/python*/site-packages"))
    assert (site / "grader" / "reference" / "chapter5.py").is_file()  # installed from the wheel, not a checkout
    assert not list(site.glob("__editable__*"))


@pytest.mark.parametrize("sample", ["correct_basic.py", "bug_no_scaling.py", "hostile/endless_loop.py", None],
                         ids=["correct", "buggy", "hostile", "missing"])
def test_results_json_is_valid_and_the_plugins_own(gradescope, tmp_path, sample):
    path = None if sample is None else (SUBMISSIONS / sample if "/" in sample else CH5_DIR / sample)
    with taking_turns(gradescope["root"]):  # the plugin grades the same submission/ folder
        data, raw = run_autograder(gradescope, path)
        plugin = plugin_json(gradescope, tmp_path)
    results = valid(data)
    assert data["output"] == json.loads(plugin)["output"]  # the walls line says most when it differs
    assert raw == plugin
    assert len(results.tests) == 17 and results.max_score == 100
    if sample == "correct_basic.py":
        assert results.score == 100
    elif sample == "bug_no_scaling.py":
        assert 0 < results.score < 100
        assert "Likely mistake: no scaling" in results.output
    elif sample is None:
        assert results.score == 0
        loads = next(t for t in results.tests if t.extra_data["check_id"] == "loads")
        assert loads.status == "failed" and "holds no .py or .ipynb file" in loads.output
    else:
        assert results.score == 0
        shape = next(t for t in results.tests if t.extra_data["check_id"] == "output_shape")
        assert "timed out after 1 s" in shape.output


def test_hidden_checks_say_only_pass_or_fail(gradescope):
    data, _ = graded(gradescope, CH5_DIR / "bug_no_scaling.py")
    (hidden,) = [t for t in data["tests"] if t["visibility"] == "hidden"]
    assert hidden["extra_data"]["check_id"] == HIDDEN and hidden["status"] == "failed"
    assert hidden["output"] == "failed" and "reference gives" not in json.dumps(data)


@pytest.mark.parametrize("sample", ["correct_folder", "correct_notebook.ipynb"])
def test_the_file_that_defines_the_function_is_found(gradescope, sample):
    data, _ = run_autograder(gradescope, CH5_DIR / sample)
    assert valid(data).score == 100


def test_a_broken_submission_says_so(gradescope, tmp_path):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "attention.py").write_text("def attention(q, k, v):\n    return (\n")
    data, _ = run_autograder(gradescope, folder)
    loads = next(t for t in valid(data).tests if t.extra_data["check_id"] == "loads")
    assert data["score"] == 0 and loads.status == "failed" and "attention.py" in loads.output


def test_no_results_from_the_grader_still_leaves_results_that_say_so(tmp_path):
    log = tmp_path / "pytest.log"
    log.write_text("ImportError: the grader could not start\n")
    results = tmp_path / "results" / "results.json"
    assert autograder.ensure(results, log) is False
    data = json.loads(results.read_text())
    assert valid(data).score == 0 and "could not grade" in data["output"] and "could not start" in data["output"]
    assert autograder.ensure(results, log) is True  # a valid file is left as it is


def test_a_bad_rubric_is_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "grader.frontends.cli", "bundle", "gradescope", "--rubric", "nope"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "nope" in done.stderr
    assert not (tmp_path / "autograder.zip").exists()


def test_a_course_secret_in_the_zip_salts_the_draws_and_shows_nowhere(gradescope, tmp_path):
    secret = "gradescope-course-secret-91c2"
    (tmp_path / "secret").write_text(secret + "\n")
    out = tmp_path / "with-secret.zip"
    done = subprocess.run([sys.executable, "-m", "grader.frontends.cli", "bundle", "gradescope", "--rubric",
                           str(gradescope["root"] / "source" / "rubric.toml"), "--secret-file", str(tmp_path / "secret"),
                           "-o", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    with zipfile.ZipFile(out) as z, taking_turns(gradescope["root"]):  # the other pytest process's runs: unsalted
        assert z.read("secret").decode().strip() == secret and z.getinfo("secret").external_attr >> 16 == 0o600
        (gradescope["root"] / "source" / "secret").write_bytes(z.read("secret"))
        try:
            data, raw = run_autograder(gradescope, CH5_DIR / "bug_no_scaling.py")
        finally:
            (gradescope["root"] / "source" / "secret").unlink()
            _runs.pop(CH5_DIR / "bug_no_scaling.py", None)
    assert "draws: salted with the course secret" in data["output"] and secret.encode() not in raw
    assert valid(data).score < 100
