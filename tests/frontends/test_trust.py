"""What a submission can do before any wall is up, tried as a student would: its pytest configuration and conftest,
links out of it, and the public draws. Each attack must fail, through the commands teachers type."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import CH5_DIR, ROOT

PYTEST = [str(Path(sys.executable).with_name("pytest"))]  # the console script, as a teacher runs it
RUBRIC = """name = "trust"
exercise = "chapter5"
[hypothesis]
max_examples = 3
[checks.loads]
points = 0
[checks.output_shape]
points = 5
depends = ["loads"]
[checks.future_weights_zero]
points = 10
depends = ["loads"]
"""
# the student's conftest: proof of import, and a forged full score at exit
CONFTEST = """
import atexit, json, os, sys
open(os.path.join(os.environ["TRUST_MARKS"], "imported-" + os.path.basename(os.path.dirname(__file__))), "w").close()
def pytest_addoption(parser):
    for name in ("--submission", "--rubric", "--grade-json"):
        parser.addoption(name)
def pytest_configure(config):
    path = config.getoption("grade_json")
    atexit.register(lambda: open(path, "w").write(json.dumps({"score": 15, "max_score": 15, "tests": []})))
"""
SWITCH_OFF = "addopts = -p no:attention_grader\n"
CONFIGS = {  # every file pytest takes its configuration from, each switching the grader off
    "pytest.ini": "[pytest]\n" + SWITCH_OFF,
    "pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-p no:attention_grader"\n',
    "setup.cfg": "[tool:pytest]\n" + SWITCH_OFF,
    "tox.ini": "[pytest]\n" + SWITCH_OFF,
    "conftest only": None,
}
# bug_no_mask: the true grade is 5 of 15 (future_weights_zero fails)
HONEST = 5.0


# imported as a pytest plugin, the student's own file would say so (in a worker the variable is not there)
IMPORTED = """import os
if os.environ.get("TRUST_MARKS"):
    open(os.path.join(os.environ["TRUST_MARKS"], "imported-attention"), "w").close()
"""


def forged_folder(root: Path, name: str, config: str | None, config_name: str) -> Path:
    sub = root / name
    sub.mkdir()
    (sub / "attention.py").write_text(IMPORTED + (CH5_DIR / "bug_no_mask.py").read_text())
    (sub / "conftest.py").write_text(CONFTEST)
    if config is not None:
        (sub / config_name).write_text(config)
    return sub


# pytest.main() from a script: no --submission on the interpreter's command line, the pin is pytest's own
MAIN = "import sys, pytest; sys.exit(pytest.main({args!r}))"
# ... and from an interpreter where the pin never went in: the plugin fails closed
UNPINNED = ("import sys, grader.frontends.pytest_pin as pin; sys.meta_path.remove(pin.Finder); import pytest; "
            "assert not getattr(pytest.Config.parse, 'pinned', False); sys.exit(pytest.main({args!r}))")
REFUSED = {  # label -> the exit status and the one line (None: pytest's own usage error)
    "-n 2 (pytest-xdist)": (2, "pytest --submission grades in this one process"),
    "--submiss (a prefix pytest rejects late)": (4, None),
    "pytest's configuration left unpinned": (2, "pytest looked for its configuration around the submission"),
}


@pytest.fixture(scope="module")
def attacks(tmp_path_factory):
    """Each layout graded by `pytest --submission` in a fresh process, side by side: name -> (run, results, marks)."""
    root = tmp_path_factory.mktemp("trust")
    (root / "rubric.toml").write_text(RUBRIC)
    runs = {}
    for i, (config_name, config) in enumerate(CONFIGS.items()):
        sub = forged_folder(root, f"layout{i}", config, config_name)
        runs[config_name] = (["--submission", str(sub)], root / f"empty{i}")
    sub = forged_folder(root, "equals", CONFIGS["pytest.ini"], "pytest.ini")
    runs["--submission=PATH"] = ([f"--submission={sub}"], root / "empty-equals")
    sub = forged_folder(root, "inside", CONFIGS["pytest.ini"], "pytest.ini")
    runs["run from inside it"] = (["--submission", "."], sub)
    sub = forged_folder(root, "plugin", "[pytest]\npythonpath = .\naddopts = -p attention\n", "pytest.ini")
    runs["-p of the student's module"] = (["--submission", str(sub)], root / "empty-plugin")
    sub = forged_folder(root, "main", CONFIGS["pytest.ini"], "pytest.ini")
    runs["pytest.main() from a script"] = (["--submission", str(sub)], root / "empty-main")
    sub = forged_folder(root, "xdist", CONFIGS["pytest.ini"], "pytest.ini")
    runs["-n 2 (pytest-xdist)"] = (["-n", "2", "--submission", str(sub)], root / "empty-xdist")
    sub = forged_folder(root, "prefix", CONFIGS["pytest.ini"], "pytest.ini")
    (sub / "conftest.py").write_text(CONFTEST.replace('"--submission"', '"--submiss"'))
    runs["--submiss (a prefix pytest rejects late)"] = (["--submiss", str(sub)], root / "empty-prefix")
    sub = forged_folder(root, "unpinned", None, "")
    runs["pytest's configuration left unpinned"] = (["--submission", str(sub)], root / "empty-unpinned")

    def run(item):
        label, (args, cwd) = item
        cwd.mkdir(exist_ok=True)
        marks = root / f"marks-{abs(hash(label))}"
        marks.mkdir()
        results = cwd / f"r-{marks.name}.json"
        args = [*args, "--rubric", str(root / "rubric.toml"), "--grade-json", str(results)]
        cmd = PYTEST + args
        if label == "pytest.main() from a script":
            cmd = [sys.executable, "-c", MAIN.format(args=args)]
        elif label == "pytest's configuration left unpinned":
            cmd = [sys.executable, "-c", UNPINNED.format(args=args)]
        done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300,
                              env={**os.environ, "TRUST_MARKS": str(marks), "PYTHONDONTWRITEBYTECODE": "1"})
        return label, (done, json.loads(results.read_text()) if results.exists() else None, sorted(os.listdir(marks)))

    with ThreadPoolExecutor(4) as pool:
        return dict(pool.map(run, runs.items()))


@pytest.mark.parametrize("label", [*CONFIGS, "--submission=PATH", "run from inside it", "-p of the student's module",
                                   "pytest.main() from a script"])
def test_a_submissions_pytest_configuration_and_conftest_never_apply(attacks, label):
    done, results, marks = attacks[label]
    assert marks == [], f"the student's conftest ran in the grading process: {marks}"
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert results is not None and results["score"] == HONEST and results["max_score"] == 15
    assert "future_weights_zero FAILED" in done.stdout or "FAILED" in done.stdout


@pytest.mark.parametrize("label", REFUSED)
def test_where_the_pin_cannot_hold_pytest_refuses_before_reading_the_submission(attacks, label):
    """pytest-xdist's workers, a prefix of --submission, an interpreter without the pin: nothing of the student's is
    read or imported, nothing is graded, and the grader's refusal is one line with exit status 2."""
    done, results, marks = attacks[label]
    status, line = REFUSED[label]
    assert marks == [], f"the student's conftest ran outside any worker: {marks}"
    assert results is None
    assert done.returncode == status, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Traceback" not in done.stdout + done.stderr
    if line is not None:
        assert done.stderr.strip().splitlines() == [done.stderr.strip()] and line in done.stderr, done.stderr
    else:
        assert "unrecognized arguments: --submiss" in done.stderr and "inifile: /dev/null" in done.stderr


def test_pytest_given_the_students_configuration_refuses_in_one_line(tmp_path):
    """A teacher who hands pytest the student's file with -c gets exit 2 and one line, and no grading."""
    sub = forged_folder(tmp_path, "given", "[pytest]\n", "pytest.ini")
    (tmp_path / "rubric.toml").write_text(RUBRIC)
    done = subprocess.run(PYTEST + ["-c", str(sub / "pytest.ini"), "--submission", str(sub), "--rubric",
                                    str(tmp_path / "rubric.toml")], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "TRUST_MARKS": str(tmp_path)})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "pytest read its configuration from the submission" in done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert not list(tmp_path.glob("imported-*"))


def test_the_pin_is_installed_where_python_reads_it():
    """`pip install .` and `pip install -e .` put attention_grader.pth at the top of site-packages."""
    import sysconfig

    from grader.frontends import wheel

    pth = Path(sysconfig.get_paths()["purelib"]) / wheel.PTH
    assert pth.read_text() == (ROOT / wheel.PTH).read_text()
    assert wheel.PTH in wheel.package_files()  # and every wheel the grader writes (Gradescope, student builds)
