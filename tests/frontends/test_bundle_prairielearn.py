"""`attention-grader bundle prairielearn`, end to end without PrairieLearn: the folder's image files go where the
Dockerfile puts them, its setup.sh builds a fresh venv standing in for the image (torch from the site layer, see
platform_env), and grade.sh runs as PrairieLearn runs it (as root, exit status 0 expected) on a temporary root
standing in for /grade (GRADE_ROOT). A correct, a buggy, a hostile, a missing and a broken submission each leave a
results.json valid against PrairieLearn's documented format; so do a bad rubric and a grader that cannot start.
The Dockerfile itself is built only where a Docker engine answers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

import platform_env
from conftest import CH5_DIR, SUBMISSIONS, built_once
from platform_env import FEW, HIDDEN, QUICK

from grader.frontends import prairielearn


# -- PrairieLearn's formats, as its documentation and schemas give them --------------------------------------
class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Image(_Doc):
    url: str
    label: str | None = None


class PLTest(_Doc):  # docs/externalGrading.md, "Grading results": what <pl-external-grader-results> renders
    name: str
    description: str | None = None
    points: float | int
    max_points: float | int
    message: str | None = None
    output: str | None = None
    images: list[Image | str] | None = None


class PLResults(_Doc):
    gradable: bool | None = None
    score: float | int | None = Field(default=None, ge=0, le=1)  # required when gradable
    message: str | None = None
    output: str | None = None
    format_errors: str | list[str] | None = None
    images: list[Image | str] | None = None
    tests: list[PLTest] | None = None


def valid(raw: bytes) -> PLResults:
    assert len(raw) < 1024 * 1024  # apps/grader-host rejects larger results
    results = PLResults.model_validate(json.loads(raw))
    assert results.gradable is False or results.score is not None
    if results.gradable is not False and results.tests:
        earned, most = sum(t.points for t in results.tests), sum(t.max_points for t in results.tests)
        assert results.score == pytest.approx(earned / most)
    return results


class ExternalGradingOptions(_Doc):  # apps/prairielearn/src/schemas/infoQuestion.ts
    comment: str | list | dict | None = None
    enabled: bool | None = None
    image: str
    entrypoint: str | list[str] | None = None
    serverFilesCourse: list[str] | None = None
    timeout: int | None = Field(default=None, le=600)
    enableNetworking: bool | None = None
    environment: dict[str, str] | None = None


class InfoQuestion(_Doc):
    uuid: str = Field(pattern=r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
    type: Literal["v3"]
    title: str
    topic: str
    tags: list[str] | None = None
    gradingMethod: Literal["Internal", "External", "Manual"]
    singleVariant: bool | None = None
    externalGradingOptions: ExternalGradingOptions


# -- the bundle, an image standing in for the real one, a /grade per run --------------------------------------
IMAGE_FILES = ("setup.sh", "grade.sh", "rubric.toml")  # and the wheel: the Dockerfile's COPY line


@pytest.fixture(scope="module")
def pl():
    """The bundle's folder and a built image: {"out": the folder, "app": /attention-grader, "venv": its venv}."""
    with built_once("prairielearn") as (folder, fresh):
        if fresh:
            build(folder)
    return {"out": folder / "out", "app": folder / "app", "venv": folder / "app" / "venv"}


def build(folder: Path) -> None:
    rubric = platform_env.course(folder, FEW, **QUICK)  # Gradescope's tests grade all 17 checks
    done = subprocess.run([sys.executable, "-m", "grader.frontends.cli", "bundle", "prairielearn", "--rubric", str(rubric),
                           "-o", str(folder / "out")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(folder / "out")
    (whl,) = (folder / "out").glob("*.whl")
    (folder / "app").mkdir()
    for name in IMAGE_FILES + (whl.name,):
        shutil.copy2(folder / "out" / name, folder / "app" / name)
    platform_env.seed(folder / "app" / "venv")
    env = {**os.environ, "PL_VENV": str(folder / "app" / "venv"), "PL_PYTHON": str(platform_env.BASE_PYTHON),
           "TORCH_INDEX_URL": "", "PYTHONPATH": ""}
    setup = subprocess.run([str(folder / "app" / "setup.sh")], env=env, capture_output=True, text=True, timeout=900)
    assert setup.returncode == 0, setup.stdout[-3000:] + setup.stderr[-3000:]


_runs: dict = {}


def grade_sh(pl, root: Path, submission: Path | None, *, venv: Path | None = None, env: dict | None = None) -> bytes:
    """Run grade.sh as PrairieLearn does on `root` holding `submission` (a file or a folder's files; None:
    nothing) in student/; results.json's bytes."""
    student = root / "student"
    student.mkdir(parents=True, exist_ok=True)
    if submission is not None and submission.is_dir():
        shutil.copytree(submission, student, dirs_exist_ok=True)
    elif submission is not None:
        shutil.copy(submission, student / submission.name)
    run_env = {**os.environ, "GRADE_ROOT": str(root), "PL_VENV": str(venv or pl["venv"]), "PYTHONPATH": "", **(env or {})}
    done = subprocess.run([str(pl["app"] / "grade.sh")], env=run_env, capture_output=True, text=True, timeout=600, cwd=root)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]  # PrairieLearn drops results otherwise
    return (root / "results" / "results.json").read_bytes()


def graded(pl, tmp_path, sample: str | None) -> PLResults:
    """grade.sh's results for a sample, from an earlier run of it when there was one (grading is deterministic)."""
    if sample not in _runs:
        path = None if sample is None else SUBMISSIONS / sample if "/" in sample else CH5_DIR / sample
        _runs[sample] = valid(grade_sh(pl, tmp_path / "grade", path))
    return _runs[sample]


def test_the_folder_holds_the_image_the_scripts_and_a_question(pl):
    out = pl["out"]
    (whl,) = out.glob("attention_grader-*.whl")
    docker = (out / "Dockerfile").read_text()
    assert f"FROM python:{sys.version_info.major}.{sys.version_info.minor}-slim" in docker
    assert f"COPY setup.sh grade.sh rubric.toml {whl.name} {prairielearn.APP}/" in docker and "setup.sh" in docker
    assert all((out / name).stat().st_mode & 0o111 for name in ("setup.sh", "grade.sh"))
    assert 'visibility = "hidden"' in (out / "rubric.toml").read_text()
    info = InfoQuestion.model_validate(json.loads((out / "question" / "info.json").read_text()))
    options = info.externalGradingOptions
    assert info.gradingMethod == "External" and options.entrypoint == f"{prairielearn.APP}/grade.sh"
    assert options.enableNetworking is False and options.serverFilesCourse == ["attention-grader/"]
    assert options.timeout == 30 + 10 + 2 * 20  # the start, load_timeout and twice total_timeout
    html = (out / "question" / "question.html").read_text()
    assert "<pl-external-grader-results>" in html and 'file-name="attention.py"' in html
    site = platform_env.site_packages(pl["venv"])
    assert (site / "grader" / "reference" / "chapter5.py").is_file()  # installed from the wheel, not a checkout
    assert not list(site.glob("__editable__*"))


@pytest.mark.parametrize("sample", ["correct_basic.py", "bug_no_scaling.py", "hostile/forge_results.py", None],
                         ids=["correct", "buggy", "hostile", "missing"])
def test_results_json_is_valid_for_every_kind_of_submission(pl, tmp_path, sample):
    results = graded(pl, tmp_path, sample)
    assert results.gradable is True and [t.name for t in results.tests] == list(FEW)
    assert sum(t.max_points for t in results.tests) == 43
    loads = next(t for t in results.tests if t.name == "loads")
    if sample == "correct_basic.py":
        assert results.score == 1 and "43/43" in results.message
    elif sample == "bug_no_scaling.py":
        assert 0 < results.score < 1 and "likely mistake: no scaling" in results.message
    elif sample is None:
        assert results.score == 0 and loads.points == 0 and "holds no .py or .ipynb file" in loads.output
    else:  # returns zeros and writes "forged by the submission" wherever it can reach
        assert results.score <= 5 / 43 and "forged" not in json.dumps(results.model_dump())


def test_a_broken_submission_says_so(pl, tmp_path):
    (tmp_path / "attention.py").write_text("def attention(q, k, v):\n    return (\n")
    results = valid(grade_sh(pl, tmp_path / "grade", tmp_path / "attention.py"))
    loads = next(t for t in results.tests if t.name == "loads")
    assert results.gradable is True and results.score == 0
    assert loads.message != "passed" and "attention.py" in loads.output


def test_hidden_checks_say_only_pass_or_fail(pl, tmp_path):
    results = graded(pl, tmp_path, "bug_no_scaling.py")
    (hidden,) = [t for t in results.tests if t.name == HIDDEN]
    assert hidden.points == 0 and hidden.message == hidden.output == "failed"
    assert "reference gives" not in json.dumps(results.model_dump())


def test_student_code_runs_under_a_uid_of_its_own(pl, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("PrairieLearn runs grade.sh as root; this test run is not root")
    assert "its own uid per worker" in graded(pl, tmp_path, "correct_basic.py").output


def test_a_bad_rubric_in_the_question_is_not_gradable(pl, tmp_path):
    root = tmp_path / "grade"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "rubric.toml").write_text('name = "broken"\nexercise = "chapter5"\n[checks.loads]\npoints = "x"\n')
    results = valid(grade_sh(pl, root, CH5_DIR / "correct_basic.py"))
    assert results.gradable is False and results.tests == [] and "checks.loads.points" in results.message
    assert results.format_errors == [results.message]


def test_an_unusable_course_secret_is_not_gradable(pl, tmp_path):
    root = tmp_path / "grade"
    secret = root / prairielearn.SECRET
    secret.parent.mkdir(parents=True)
    secret.write_text("\n")
    results = valid(grade_sh(pl, root, None))
    assert results.gradable is False and "the course secret is empty" in results.message


def test_a_grader_that_cannot_start_still_leaves_results_and_gets_the_secret(pl, tmp_path):
    """A venv whose python only notes its environment: grade.sh's last resort writes the results, and the course
    secret in serverFilesCourse was handed to the grader and closed to everyone but root."""
    fake = tmp_path / "venv"
    (fake / "bin").mkdir(parents=True)
    (fake / "bin" / "python").write_text(f"#!/bin/sh\nenv > {tmp_path}/env.txt\nexit 1\n")
    (fake / "bin" / "python").chmod(0o755)
    root = tmp_path / "grade"
    secret = root / prairielearn.SECRET
    secret.parent.mkdir(parents=True)
    secret.write_text("the course's salt\n")
    secret.chmod(0o644)
    results = valid(grade_sh(pl, root, None, venv=fake))
    assert results.gradable is False and "could not grade" in results.message
    assert f"ATTENTION_GRADER_SECRET_FILE={secret}" in (tmp_path / "env.txt").read_text().splitlines()
    assert secret.stat().st_mode & 0o777 == 0o600 and secret.parent.stat().st_mode & 0o777 == 0o700


def test_ensure_leaves_a_valid_file_when_the_grader_left_none(tmp_path):
    log = tmp_path / "grade.log"
    log.write_text("Segmentation fault (core dumped)\n")
    results = tmp_path / "results" / "results.json"
    assert prairielearn.ensure(results, log) is False
    data = valid(results.read_bytes())
    assert data.gradable is False and "Segmentation fault" in data.output
    assert prairielearn.ensure(results, log) is True  # a valid file is left as it is


def test_the_dockerfile_builds_an_image_that_grades(request, tmp_path):
    if shutil.which("docker") is None:
        pytest.skip("no docker command on this machine")
    info = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=60)
    if info.returncode != 0:
        pytest.skip(f"no Docker engine answers `docker info`: {(info.stderr.strip().splitlines() or ['?'])[-1][:200]}")
    pl = request.getfixturevalue("pl")
    tag = "attention-grader-test-prairielearn"
    done = subprocess.run(["docker", "build", "-t", tag, str(pl["out"])], capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    root = tmp_path / "grade"
    (root / "student").mkdir(parents=True)
    shutil.copy(CH5_DIR / "correct_basic.py", root / "student")
    run = subprocess.run(["docker", "run", "--rm", "--network", "none", "-v", f"{root}:/grade",
                          "-e", "ATTENTION_GRADER_ALLOW_WEAK_WALLS=1", tag, f"{prairielearn.APP}/grade.sh"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert valid((root / "results" / "results.json").read_bytes()).score == 1


def test_a_bad_rubric_is_one_line(tmp_path):  # bundle classroom's own refusal: test_bundle_classroom's whole points
    done = subprocess.run([sys.executable, "-m", "grader.frontends.cli", "bundle", "prairielearn", "--rubric", "nope"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "nope" in done.stderr
    assert list(tmp_path.iterdir()) == []
