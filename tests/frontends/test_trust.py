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
    (sub / "torch.py").write_text(IMPORTED.replace("imported-attention", "imported-torch"))  # first on a cwd's path
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
    assert marks == [], f"the student's conftest (or torch.py) ran outside any worker: {marks}"
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


# -- links, special files and sizes, through every front end, as root and as an unprivileged user ---------------------
# one process drives all three front ends over one class (a process each would cost its start-up each): `grade` on the
# class, then `check` and `pytest --submission` (pytest.main) on each submission in turn
FRONT_ENDS = """
import contextlib, io, json, os, sys
import pytest
from grader.frontends import cli
rubric, klass, out = sys.argv[1:]
names = sorted(os.listdir(klass))
print("UID", os.geteuid(), flush=True)
def said(front, name, rc, score, text):
    print("RESULT " + json.dumps(dict(front=front, name=name, rc=int(rc), score=score, text=text)), flush=True)
def loads(path):
    results = json.load(open(path))
    return results["score"], [t["output"] for t in results["tests"] if t["extra_data"]["check_id"] == "loads"][0]
rc = cli.main(["grade", klass, "--rubric", rubric, "--out", out, "--workers", "1"])
for name in names:
    said("grade", name, rc, *loads(os.path.join(out, name, "results.json")))
for name in names:
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        rc = cli.main(["check", os.path.join(klass, name), "--rubric", rubric])
    said("check", name, rc, text.getvalue().split(", ")[0].rsplit(": ", 1)[1], text.getvalue())
for name in names:
    r = os.path.join(out, "pytest-" + name + ".json")
    with contextlib.redirect_stdout(io.StringIO()):
        rc = pytest.main(["-q", "--submission", os.path.join(klass, name), "--rubric", rubric, "--grade-json", r])
    said("pytest", name, rc, *loads(r))
"""
LIMITED = RUBRIC + "[limits]\nmax_source_kb = 16\n"  # the rubric's limit, below the padded correct file
ROOT_ONLY = "root:$6$rounds=5000$salt$not-for-students:19000:0:99999:7:::\n"
AS_USER = Path(__file__).parents[1] / "sandbox" / "as_user.py"
USER = "attention-grader-test"


def hostile_class(shared: Path) -> dict[str, str]:
    """A class folder of one attack a submission, each `attention.py`, and an empty one: name -> the line `loads`
    must fail with (None: the empty submission's own)."""
    import grader.reference.chapter5 as installed

    klass = shared / "class"
    secret = shared / "secret"
    secret.mkdir(mode=0o700)
    (secret / "shadow").write_text(ROOT_ONLY)
    (secret / "shadow").chmod(0o600)
    padded = (CH5_DIR / "correct_basic.py").read_text() + "# a long comment\n" * 1200  # correct, over 16 KB
    for name in ("reference", "shadow", "fifo", "huge", "limit", "empty"):
        (klass / name).mkdir(parents=True)
    sub = {name: klass / name / "attention.py" for name in ("reference", "shadow", "fifo", "huge", "limit", "empty")}
    sub["reference"].symlink_to(installed.__file__)
    sub["shadow"].symlink_to(secret / "shadow")
    os.mkfifo(sub["fifo"])
    with open(sub["huge"], "wb") as f:
        f.truncate(10 << 30)  # sparse
    sub["limit"].write_text(padded)
    sub["empty"].write_text("")
    out = "a symbolic link that leads out of the submission; hand in the file itself"
    return {"reference": f"{sub['reference']}: {out}", "shadow": f"{sub['shadow']}: {out}",
            "fifo": f"{sub['fifo']}: a FIFO, not a file; hand in regular files only",
            "huge": f"{sub['huge']}: 10.0 GB, more than the 16 KB a Python file may have (the rubric's limits)",
            "limit": f"{sub['limit']}: {len(padded) // 1024} KB, more than the 16 KB a Python file may have "
                     "(the rubric's limits)",
            "empty": None}


@pytest.fixture(scope="module", params=["root", "user"])
def front_ends(request):
    """(front end, submission) -> what it said, for the class above graded by the three front ends, in one process:
    as the user running the suite, and as an unprivileged user (created here; needs root)."""
    import shutil
    import tempfile

    if request.param == "user" and os.geteuid() != 0:
        pytest.skip("creating the unprivileged user needs root")
    shared = Path(tempfile.mkdtemp(prefix="attention-grader-trust-"))  # not under pytest's 0700 folder
    try:
        shared.chmod(0o755)
        expected = hostile_class(shared)
        (shared / "rubric.toml").write_text(LIMITED)
        work = shared / "work"
        work.mkdir()
        work.chmod(0o1777)
        cmd = [sys.executable, "-c", FRONT_ENDS, str(shared / "rubric.toml"), str(shared / "class"), str(work / "out")]
        if request.param == "user":
            cmd = [sys.executable, str(AS_USER), USER, "--", *cmd]
        env = {k: v for k, v in os.environ.items() if k != "ATTENTION_GRADER_ALLOW_WEAK_WALLS"}
        done = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=300, env=env)
        said = [json.loads(line[len("RESULT "):]) for line in done.stdout.splitlines() if line.startswith("RESULT ")]
        assert len(said) == 3 * len(expected), done.stdout[-3000:] + done.stderr[-3000:]
        assert ("UID 0\n" in done.stdout) == (request.param == "root" and os.geteuid() == 0)
        return expected, {(s["front"], s["name"]): s for s in said}, done
    finally:
        shutil.rmtree(shared, ignore_errors=True)


@pytest.mark.parametrize("front", ["grade", "check", "pytest"])
def test_links_out_special_files_and_sizes_are_refused_in_one_line_by_every_front_end(front_ends, front):
    """A link to the installed reference or to a root-only file, a FIFO, a 10 GB file, and a correct file over the
    rubric's own [limits]: each costs `loads` with one line and scores what an empty submission scores."""
    expected, said, done = front_ends
    empty, status = said[front, "empty"], 0 if front == "grade" else 1  # grade's status is the batch's
    assert empty["rc"] == status and empty["score"] in (0, "0/15"), empty
    for name, line in expected.items():
        if line is None:
            continue
        got = said[front, name]
        assert got["rc"] == status and got["score"] == empty["score"], (name, got)
        if front == "check":
            assert f"\n  {line}\n" in got["text"], (name, got["text"])
        else:
            assert got["text"] == line, name
    assert "root:$6$" not in done.stdout + done.stderr and "Traceback" not in done.stderr
