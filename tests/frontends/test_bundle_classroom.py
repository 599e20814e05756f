"""`attention-grader bundle classroom`, end to end without GitHub: the template's workflow is read as GitHub
Actions reads it, its install step runs in a fresh venv (torch from the site layer, see platform_env) on a
checkout of the template with a submission in it, and each autograding step's `command:` runs as
classroom-resources/autograding-command-grader runs it (a shell, an environment of PATH and HOME, the result
object of its src/main.js, base64); the reporter's sum comes from those results as
classroom-resources/autograding-grading-reporter computes it. A correct, a buggy, a hostile, a missing and a broken
submission each give valid results with the points the rubric gives them."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Literal

import pytest
import yaml
from pydantic import BaseModel, ConfigDict

import platform_env
from conftest import CH5_DIR, SUBMISSIONS, built_once
from platform_env import FEW, HIDDEN, QUICK

from grader.frontends import classroom

SECRET = "the course's own salt, 8c0f"
UNGRADED = {HIDDEN, "gradients"}  # hidden, and depending on the hidden one: graded after submission
ON_OFFER = 5 + 5 + 10 + 8  # FEW's other checks: the student build records answers for these alone


# -- the command grader's result (src/main.js, generateResult) ------------------------------------------------
class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class StepTest(_Doc):
    name: str
    status: Literal["pass", "fail", "error"]
    score: int
    message: str | None = None  # undefined, so left out, when the command passed with its output inherited
    test_code: str
    filename: str
    line_no: int
    duration: int


class Result(_Doc):
    version: Literal[1]
    status: Literal["pass", "fail", "error"]
    max_score: int
    tests: list[StepTest]


def command_grader(step: dict, checkout: Path, home: Path, bin_dir: Path) -> tuple[str, str]:
    """(the step's output `result`, what the step's log shows) for a step using the command grader."""
    w = step["with"]
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "FORCE_COLOR": "true", "DOTNET_CLI_HOME": "/tmp", "DOTNET_NOLOGO": "true",
           "HOME": str(home)}  # the action's whole environment
    max_score = int(w.get("max-score") or 0)
    start = time.monotonic()
    try:
        done = subprocess.run(w["command"], shell=True, env=env, cwd=checkout, timeout=float(w["timeout"]) * 60,
                              capture_output=True, text=True)
        status, message, log = ("pass", None, done.stdout + done.stderr) if done.returncode == 0 else \
            ("fail", "failed with exit code 1", done.stdout + done.stderr)
    except subprocess.TimeoutExpired:
        status, message, log = "error", "Command timed out", ""
    test = {"name": w["test-name"], "status": status, "score": max_score if status == "pass" else 0,
            "test_code": w["command"], "filename": "", "line_no": 0, "duration": int((time.monotonic() - start) * 1000)}
    if message is not None:
        test["message"] = message
    result = {"version": 1, "status": status, "max_score": max_score, "tests": [test]}
    return base64.b64encode(json.dumps(result).encode()).decode(), log


def reporter(step: dict, outputs: dict[str, str]) -> tuple[int, int, dict[str, Result]]:
    """(total, max, each runner's result) as the reporter's src/main.js and notify-classroom.js add them up."""
    env = {}
    for name, value in step["env"].items():  # GitHub expands ${{steps.<id>.outputs.result}} before the step runs
        (sid,) = re.fullmatch(r"\$\{\{\s*steps\.([\w-]+)\.outputs\.result\s*\}\}", value).groups()
        env[name] = outputs[sid]
    total = most = 0
    results = {}
    for runner in step["with"]["runners"].split(","):
        results[runner] = Result.model_validate(json.loads(base64.b64decode(env[f"{runner.strip().upper()}_RESULTS"])))
        if results[runner].max_score:
            most += results[runner].max_score
            total += sum(t.score for t in results[runner].tests)
    return total, most, results


# -- the template, installed once --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cr():
    with built_once("classroom") as (folder, fresh):
        if fresh:
            build(folder)
    workflow = yaml.safe_load((folder / "out" / "template" / classroom.WORKFLOW).read_text())
    return {"out": folder / "out", "home": folder / "home", "bin": folder / "bin", "workflow": workflow,
            "steps": workflow["jobs"]["run-autograding-tests"]["steps"]}


def build(folder: Path) -> None:
    rubric = platform_env.course(folder, FEW, **QUICK)
    env = {**os.environ, "ATTENTION_GRADER_SECRET": SECRET}  # never to reach the template
    done = subprocess.run([sys.executable, "-m", "grader.frontends.cli", "bundle", "classroom", "--rubric", str(rubric),
                           "-o", str(folder / "out")], capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr
    platform_env.seed(folder / "home" / ".attention-grader" / "venv")
    bin_dir = platform_env.python_bin(folder / "bin")  # what actions/setup-python puts first on PATH
    checkout = checkout_of(folder / "out", folder / "setup-checkout", None)
    steps = yaml.safe_load((checkout / classroom.WORKFLOW).read_text())["jobs"]["run-autograding-tests"]["steps"]
    (install,) = [s for s in steps if s.get("name") == "Install the grader"]
    env = {**os.environ, "HOME": str(folder / "home"), "PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHONPATH": ""}
    setup = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", install["run"]], env=env,
                           cwd=checkout, capture_output=True, text=True, timeout=900)  # as a run: step runs
    assert setup.returncode == 0, setup.stdout[-3000:] + setup.stderr[-3000:]


def checkout_of(out: Path, where: Path, submission: Path | None) -> Path:
    """A student's repository: the template's files and their submission (a file or a folder's files)."""
    shutil.rmtree(where, ignore_errors=True)
    shutil.copytree(out / "template", where)
    if submission is not None and submission.is_dir():
        shutil.copytree(submission, where, dirs_exist_ok=True)
    elif submission is not None:
        shutil.copy(submission, where / submission.name)
    return where


_pushes: dict = {}


def push(cr, tmp_path, sample: str | Path | None) -> dict:
    """Every autograding step and the reporter on a checkout holding `sample`: {"total", "max", "results",
    "logs"}; from an earlier push of the same sample when there was one."""
    if sample in _pushes:
        return _pushes[sample]
    path = sample if isinstance(sample, Path) else None if sample is None else \
        SUBMISSIONS / sample if "/" in sample else CH5_DIR / sample
    checkout = checkout_of(cr["out"], tmp_path / "checkout", path)
    outputs, logs = {}, {}
    for step in cr["steps"]:
        if step.get("uses", "").startswith("classroom-resources/autograding-command-grader"):
            outputs[step["id"]], logs[step["id"]] = command_grader(step, checkout, cr["home"], cr["bin"])
    (report,) = [s for s in cr["steps"] if s.get("uses", "").startswith("classroom-resources/autograding-grading-reporter")]
    total, most, results = reporter(report, outputs)
    _pushes[sample] = {"total": total, "max": most, "results": results, "logs": logs}
    return _pushes[sample]


def test_the_template_holds_the_workflow_and_the_student_build(cr):
    steps = cr["steps"]
    assert cr["workflow"]["on"] == ["push", "repository_dispatch"]
    assert steps[0]["uses"] == "actions/checkout@v4"
    assert steps[1]["with"]["python-version"] == f"{sys.version_info.major}.{sys.version_info.minor}"
    graders = [s for s in steps if s.get("uses") == classroom.COMMAND_GRADER]
    ids = [s["id"] for s in graders]
    assert set(ids) == set(load_course(cr).checks) - UNGRADED
    for s in graders:
        assert s["with"]["command"] == f'"{classroom.VENV}/bin/python" -m grader.frontends.classroom {s["id"]} --rubric chapter5'
        assert s["with"]["max-score"] == int(load_course(cr).checks[s["id"]].points) and s["with"]["timeout"] == 2
    assert sum(s["with"]["max-score"] for s in graders) == ON_OFFER
    assert steps[-1]["uses"] == classroom.REPORTER and steps[-1]["with"]["runners"] == ",".join(ids)
    text = (cr["out"] / "template" / classroom.WORKFLOW).read_text()
    assert len(re.findall(r"^ +command: ", text, re.M)) == len(ids)  # one command: line per step
    (whl,) = (cr["out"] / "template" / classroom.WHEELS).glob("*.whl")
    assert "+student.chapter5" in whl.name
    names = zipfile.ZipFile(whl).namelist()
    assert not [n for n in names if n.startswith("grader/reference/")]
    teacher = (cr["out"] / "README.md").read_text()
    assert f"not here: {HIDDEN}, gradients" in teacher and "no course secret can be kept" in teacher
    files = [p.read_bytes() for p in (cr["out"] / "template").rglob("*") if p.is_file()]
    files += [zipfile.ZipFile(whl).read(n) for n in names]
    assert not [f for f in files if SECRET.encode() in f]  # bundled under the secret, shipping nothing of it
    site = platform_env.site_packages(cr["home"] / ".attention-grader" / "venv")
    assert list(site.glob("attention_grader-0.2.0+student.chapter5.dist-info"))


def load_course(cr):
    from grader.grading.rubric import load

    return load(str(Path(cr["out"]).parent / "course.toml"))


@pytest.mark.parametrize("sample", ["correct_basic.py", "bug_no_scaling.py", "hostile/fake_pytest_output.py", None],
                         ids=["correct", "buggy", "hostile", "missing"])
def test_every_kind_of_submission_gets_valid_results(cr, tmp_path, sample):
    pushed = push(cr, tmp_path, sample)
    assert pushed["max"] == ON_OFFER
    results = pushed["results"]
    failed = {rid for rid, r in results.items() if r.status != "pass"}
    assert all(r.status in ("pass", "fail") for r in results.values())  # no step errored or timed out
    if sample == "correct_basic.py":
        assert pushed["total"] == ON_OFFER and failed == set()
    elif sample == "bug_no_scaling.py":
        assert failed == {"sqrt_scaling"} and pushed["total"] == ON_OFFER - 8
        assert "Likely mistake: no scaling" in pushed["logs"]["sqrt_scaling"]
    elif sample is None:
        assert pushed["total"] == 0 and "holds no .py or .ipynb file" in pushed["logs"]["loads"]
    else:  # prints a perfect pytest run and returns zeros
        assert "content_dependent" in failed and pushed["total"] <= 5
        assert "17 passed" not in pushed["logs"]["content_dependent"]


def test_a_broken_submission_says_so(cr, tmp_path):
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "attention.py").write_text("def attention(q, k, v):\n    return (\n")
    pushed = push(cr, tmp_path, tmp_path / "broken")
    assert pushed["total"] == 0 and pushed["results"]["loads"].status == "fail"
    assert "attention.py" in pushed["logs"]["loads"]


def test_a_policy_violation_that_costs_everything_fails_every_step(grade_of):
    """Correct code reaching for the reference: the teacher's grading of it, shared with the verdict matrix."""
    from grader.grading.rubric import load

    verdicts = classroom.steps_verdicts(load("chapter5"), grade_of(CH5_DIR / "bug_imports_reference.py"))
    assert not any(c["passed"] for c in verdicts["checks"].values())
    assert verdicts["checks"]["reference_match"]["status"] == "passed"  # its verdict, yet not its points
    assert "imports the grader's reference" in verdicts["zeroed"] and verdicts["total"] == "0/100"


def test_one_push_is_one_grading(cr, tmp_path):
    """The first step grades; the others read its verdicts, in a fraction of the time."""
    pushed = push(cr, tmp_path, "correct_basic.py")
    first, *rest = [r.tests[0].duration for r in pushed["results"].values()]
    assert max(rest) < first / 3


def test_whole_points_only(tmp_path):
    rubric = platform_env.course(tmp_path)
    rubric.write_text(rubric.read_text().replace("[checks.gradients]\npoints = 3", "[checks.gradients]\npoints = 2.5"))
    done = subprocess.run([sys.executable, "-m", "grader.frontends.cli", "bundle", "classroom", "--rubric", str(rubric),
                           "-o", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "whole points" in done.stderr and "gradients" in done.stderr and not (tmp_path / "out").exists()


def test_the_rubrics_packages_come_after_torch_on_both_platforms():
    """The conventions issue's rubric field, read as getattr(rubric, "packages", []) until it lands."""
    from grader.frontends import prairielearn
    from grader.grading.rubric import Rubric, load

    class WithPackages(Rubric):
        packages: list[str] = []

    rubric = WithPackages.model_validate({**load("chapter5").model_dump(), "packages": ["einops>=0.7", "numpy<3"]})
    steps = yaml.safe_load(classroom.workflow(rubric, "g.whl"))["jobs"]["run-autograding-tests"]["steps"]
    (install,) = [s["run"] for s in steps if s.get("name") == "Install the grader"]
    for script in (install, prairielearn.setup_script(rubric, "g.whl")):
        lines = [line for line in script.splitlines() if "pip install" in line]
        assert ["torch==" in line for line in lines] == [True, True, True]
        assert "'einops>=0.7' 'numpy<3'" in lines[1] and "--index-url" not in lines[1] and "g.whl" in lines[2]


def test_a_rubric_in_parts_gets_a_step_per_part_check(tmp_path, monkeypatch, grade_of):
    """cs336's checks are "part.check": a step id is letters, digits, - and _, so the dot becomes "__" in the id, the
    reporter's runners and its <ID>_RESULTS variables, while the command and the step's name keep the check's id.
    (The student build it holds is tests/frontends/test_bundle_student.py's business: a stand-in here.)"""
    from grader.frontends import student_build
    from grader.grading.rubric import load

    def fake_build(rubric, rubric_file, out):
        out.mkdir(parents=True, exist_ok=True)
        (out / "attention_grader-0.2.0+student.cs336-py3-none-any.whl").write_bytes(b"PK")
        return out / "attention_grader-0.2.0+student.cs336-py3-none-any.whl"

    monkeypatch.setattr(student_build, "build", fake_build)
    rubric = load("cs336")
    classroom.build(rubric, Path(), tmp_path / "out", build_dir=tmp_path / "build")
    steps = yaml.safe_load((tmp_path / "out" / "template" / classroom.WORKFLOW).read_text())["jobs"]["run-autograding-tests"]["steps"]
    graders = [s for s in steps if s.get("uses") == classroom.COMMAND_GRADER]
    assert [s["with"]["command"].split()[3] for s in graders] == list(rubric.order())  # nothing hidden in cs336
    assert all(re.fullmatch(r"[A-Za-z_][\w-]*", s["id"]) for s in graders)
    assert graders[1]["id"] == "sdpa__output_shape" and graders[1]["name"].startswith("sdpa.output_shape: sdpa: ")
    assert sum(s["with"]["max-score"] for s in graders) == rubric.max_score
    outputs = {s["id"]: base64.b64encode(json.dumps({"version": 1, "status": "pass", "max_score": 1, "tests": [
        {"name": "x", "status": "pass", "score": 1, "test_code": "", "filename": "", "line_no": 0, "duration": 0}]}).encode()).decode()
        for s in graders}
    assert reporter(steps[-1], outputs)[:2] == (len(graders), len(graders))  # every runner's variable found
    assert "`run_scaled_dot_product_attention`, `run_multihead_self_attention`" in (tmp_path / "out" / "template" / "README.md").read_text()
    verdicts = classroom.steps_verdicts(rubric, grade_of(SUBMISSIONS / "cs336" / "correct_modules", "cs336"))
    assert set(verdicts["checks"]) == set(rubric.checks) and verdicts["total"] == f"{rubric.max_score:g}/{rubric.max_score:g}"
