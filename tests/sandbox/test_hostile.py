"""Hostile submissions (submissions/hostile/, one file per attack): the grader survives each, is not fooled, and
leaves nothing behind: no process, no file outside the worker's private folder, a normal report.

As root every wall is up (own uid, private file system view, PID namespace, Landlock, seccomp, no network) and
every assertion applies; without root the assertions that need a wall the machine cannot raise are skipped, and
the report's environment lines say so. The samples where walls matter are graded a second time as an unprivileged
user (created here), with the same verdicts. The corpus is graded with the chapter5 rubric cut down to small limits
and few examples, so each case costs its limits plus a few seconds.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import CH5_DIR, SUBMISSIONS, failed, load_factor

HOSTILE = SUBMISSIONS / "hostile"
LIMITS = {"load_timeout": 2, "call_timeout": 1, "total_timeout": 10, "memory_mb": 1024, "output_kb": 1024,
          "max_processes": 16}
SLACK = 8.0  # seconds beyond a case's limits: worker starts, kills, the grader's own work, on two busy cores


FORGED = ("results.json", "gradebook.csv", "attention-grader-hostile-forged", "attention-grader-hostile-pwned")


def _walls() -> dict:
    from grader.sandbox import confinement as walls_host

    return walls_host.walls()


def _require(wall: str) -> None:
    if _walls()[wall] is not None:
        pytest.skip(f"needs the {wall} wall, which is down here: {_walls()[wall]}")


def _toml(data: dict, prefix: str = "") -> str:
    """Enough TOML for a rubric: scalars and lists as JSON (valid TOML for these types), tables as [a.b]."""
    lines = [f"{k} = {json.dumps(v)}" for k, v in data.items() if not isinstance(v, dict)]
    for k, v in data.items():
        if isinstance(v, dict):
            lines += ["", f"[{prefix}{k}]", _toml(v, f"{prefix}{k}.")]
    return "\n".join(lines)


@pytest.fixture(scope="session")
def small_rubric():
    """chapter5 with small limits and 2 examples per property: same checks and points, fast and bounded."""
    from grader.grading import rubric

    base = rubric.load("chapter5")
    return base.model_copy(update={"limits": rubric.Limits(**LIMITS), "hypothesis": rubric.Hypothesis(max_examples=2)})


@pytest.fixture(scope="session")
def small_toml(small_rubric, tmp_path_factory) -> Path:
    from grader.grading import rubric

    path = tmp_path_factory.mktemp("rubric") / "hostile.toml"
    dump = small_rubric.model_dump(exclude_none=True)
    if not dump.get("parts"):  # `parts = []` would read as a rubric in parts with none
        dump.pop("parts", None)
    path.write_text(_toml(dump) + "\n")
    assert rubric.load(str(path)).model_dump() == small_rubric.model_dump()
    return path


# -- grading one file, watching what it leaves behind --------------------------------------------------------------
def _boot_clock() -> float:
    return time.clock_gettime(time.CLOCK_BOOTTIME)


def _stat(pid: int) -> tuple[str, int, float, bool] | None:
    """(state, real uid, start time on the boot clock, inside a nested PID namespace) of a process, None when gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        with open(f"/proc/{pid}/status") as f:
            status = {k: v.split() for k, _, v in (line.partition(":") for line in f)}
        uid = int(status["Uid"][0])
    except (OSError, KeyError, IndexError, ValueError):
        return None
    return fields[0], uid, int(fields[19]) / os.sysconf("SC_CLK_TCK"), len(status.get("NSpid", [])) > 1


def _pids_wall() -> bool:
    return _walls().get("pids", "unknown") is None


def _gone(pids: list[int]) -> bool:
    """The processes a submission printed are gone. In its own PID namespace their numbers are that namespace's,
    meaningless here: `_leftovers` looks for any process left in a namespace instead."""
    return _pids_wall() or all(_stat(pid) is None or _stat(pid)[0] == "Z" for pid in pids)


def _parent(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _other_test_processes(pids: list[int]) -> set[int]:
    """pytest-xdist's other workers (this one's siblings): what they start grades someone else's file."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return set()
    return {p for p in pids if _parent(p) == os.getppid() and p != os.getpid()}


def _descends_from(pid: int, ancestors: set[int]) -> bool:
    while pid > 1:
        if pid in ancestors:
            return True
        pid = _parent(pid)
    return False


def _leftovers(slots: list[list], printed: list[int], since: float) -> list[int]:
    """Live processes the submission started: those it printed (if started since `since`), and any that ran under a
    worker uid while this grading held it (a uid is one worker's alone between acquire and release)."""
    pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    others = _other_test_processes(pids)
    found = []
    for pid in pids:
        st = _stat(pid)
        if st is None or st[0] == "Z":
            continue
        _, uid, start, nested = st
        held = any(uid == u and t0 - 0.05 <= start <= t1 for u, t0, t1 in slots if u is not None)
        ours = uid == os.getuid() and start >= since - 0.05 and not (others and _descends_from(pid, others))
        if held or (ours and nested) or (not _pids_wall() and pid in printed and start >= since - 0.05):
            found.append(pid)
    return found


def _ancestors_cwds() -> list[Path]:
    """The working folder of this process and of every ancestor: a worker that sees /proc/<pid>/cwd could write there."""
    found, pid = [], os.getpid()
    while pid > 1:
        try:
            found.append(Path(os.readlink(f"/proc/{pid}/cwd")))
        except OSError:
            break
        pid = _parent(pid)
    return found


def _forged_paths(cwd: Path) -> set[Path]:
    places = [cwd.parent, Path.home(), Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"), *_ancestors_cwds()]
    return {p / name for p in places for name in FORGED if (p / name).exists()}


@dataclass
class Run:
    grade: object
    seconds: float
    leftovers: list[int]
    strays: list[str]
    pids: list[int]

    def outcome(self, cid: str):
        return next(o for o in self.grade.outcomes if o.id == cid)

    @property
    def report(self) -> str:
        from grader.reports.gradescope import gradescope

        return json.dumps(gradescope(self.grade))


def _grade(path: Path, rubric, cwd: Path) -> Run:
    from grader.grading.engine import Grading
    from grader.sandbox import uids

    slots: list[list] = []
    acquire, release = uids.acquire, uids.release

    def tracked_acquire(workdir):
        uid = acquire(workdir)
        slots.append([uid, _boot_clock(), float("inf")])
        return uid

    def tracked_release(uid):
        for slot in slots:
            if slot[0] == uid and slot[2] == float("inf"):
                slot[2] = _boot_clock()
        release(uid)

    cwd.mkdir(parents=True, exist_ok=True)
    before = _forged_paths(cwd)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(uids, "acquire", tracked_acquire)
        mp.setattr(uids, "release", tracked_release)
        mp.chdir(cwd)
        since = _boot_clock()
        start = time.monotonic()
        grade = Grading(path, rubric).finish()
        seconds = time.monotonic() - start
    # forked processes share the output file, each line written at once in any order: read every "HOSTILE-PID <n>"
    pids = [int(n) for n in re.findall(r"HOSTILE-PID (\d+)", grade.output)]
    deadline = time.monotonic() + 2  # a killed process may take a moment to be reaped
    while (left := _leftovers(slots, pids, since)) and time.monotonic() < deadline:
        time.sleep(0.05)
    strays = sorted(str(p) for p in (_forged_paths(cwd) - before)) + [str(p) for p in cwd.iterdir()]
    return Run(grade, seconds, left, strays, pids)


_runs: dict = {}


@pytest.fixture(scope="session")
def graded(small_rubric, tmp_path_factory):
    """name -> Run for a hostile file (or a chapter5 sample, by path), graded once per session."""

    def run(name: str | Path) -> Run:
        path = Path(name) if isinstance(name, Path) else HOSTILE / name
        if str(path) not in _runs:
            _runs[str(path)] = _grade(path, small_rubric, tmp_path_factory.mktemp("cwd") / "cwd")
        return _runs[str(path)]

    run(HOSTILE / "returns_none.py")  # warms the fork server, so no case pays for its start
    return run


def assert_normal(run: Run) -> None:
    """What every hostile case must end in: a normal, small report within its limits, nothing left behind."""
    grade = run.grade
    assert {o.status for o in grade.outcomes} <= {"passed", "failed", "skipped"}
    assert grade.score == sum(o.points for o in grade.outcomes) or grade.score == 0
    assert len(run.report) <= 1 << 20
    limits = LIMITS["total_timeout"] + LIMITS["load_timeout"]
    assert run.seconds <= (limits + SLACK) * load_factor(), f"took {run.seconds:.1f} s"
    assert run.leftovers == [], f"processes left alive: {run.leftovers}"
    if _walls()["mounts"] is None and _walls()["uid"] is None:  # without them a worker can write where its user can
        assert run.strays == [], f"files outside the worker's folder: {run.strays}"


# -- each case ends with the failure a teacher understands ---------------------------------------------------------
REASONS = [
    ("exit_at_import.py", "loads", "exited during import: SystemExit (sys.exit(0) was called)"),
    ("os_exit_at_import.py", "loads", "exited with status 3 (os._exit or sys.exit in the submission?) during import"),
    ("os_exit_in_function.py", "output_shape", "exited with status 0"),
    ("raise_systemexit.py", "output_shape", "SystemExit (sys.exit(3) was called)"),
    ("raise_keyboardinterrupt.py", "output_shape", "KeyboardInterrupt"),
    ("endless_loop.py", "output_shape", "timed out after 1 s"),
    ("endless_loop_ignoring_signals.py", "output_shape", "timed out after 1 s"),
    ("long_c_sleep.py", "output_shape", "timed out after 1 s"),
    ("long_c_matmul.py", "output_shape", "timed out after 1 s"),
    ("memory_torch.py", "output_shape", "memory limit exceeded (1024 MiB)"),
    ("memory_at_import.py", "loads", "memory limit exceeded (1024 MiB)"),
    ("orphan_then_exit.py", "output_shape", "exited with status 0"),
    ("fork_bomb.py", "loads", "timed out after 2 s while loading the file"),
    ("flood_uncaught.py", "loads", "output too large"),
    ("forge_frames.py", "output_shape", "broke the protocol"),
    ("returns_none.py", "output_shape", "returned NoneType"),
    ("returns_string.py", "output_shape", "returned str"),
    ("raising_attributes.py", "output_shape", "RuntimeError: no __class__ for you"),
    ("wrong_dtype.py", "output_shape", "dtype torch.int64"),
    ("wrong_shape.py", "output_shape", "has shape"),
    ("huge_expand.py", "output_shape", "out has shape (50000, 50000, 10)"),
    ("syntax_error.py", "loads", "line 5"),
    ("missing_function.py", "loads", "no function named scaled_dot_product_attention"),
    ("name_typo.py", "output_shape", "NameError: name 'scroes' is not defined"),
    ("import_missing_package.py", "loads", "pip install attention_helpers_that_do_not_exist"),
]
ON_META = [  # correct on the CPU, hostile on another device: only the device check fails
    ("exit_on_meta.py", "exited with status 7 (os._exit or sys.exit in the submission?) while calling your function"),
    ("hang_on_meta.py", "timed out after 1 s while calling your function"),
    ("forge_frames_on_meta.py", "the worker broke the protocol while calling your function: frame too large"),
]


@pytest.mark.parametrize("name, check, reason", REASONS, ids=[r[0] for r in REASONS])
def test_fails_with_a_reason_and_nothing_else_passes(graded, name, check, reason):
    run = graded(name)
    assert_normal(run)
    outcome = run.outcome(check)
    assert outcome.status == "failed" and reason in outcome.message, outcome.message
    assert run.grade.score == 0
    after = [o for o in run.grade.outcomes if o.id not in ("loads", "policy")]
    assert all(o.status != "passed" for o in after)
    if check == "loads":
        assert {o.status for o in after} == {"skipped"}


@pytest.mark.parametrize("name, reason", ON_META, ids=[r[0] for r in ON_META])
def test_hostile_only_on_another_device_loses_only_the_device_check(graded, name, reason):
    run = graded(name)
    assert_normal(run)
    assert failed(run.grade) == {"device_placement"}
    assert reason in run.outcome("device_placement").message
    assert len(run.pids) == 1 and run.grade.score == run.grade.max_score - run.outcome("device_placement").max_points


def test_a_file_that_does_not_load_runs_once(small_rubric, tmp_path):
    """No diagnosis for a file that never loaded: asking would only run it (and its timeouts) again. What every
    worker printed stays in the report."""
    path = tmp_path / "fails_at_import.py"
    path.write_text("def attention(q, k, v):\n    return q, q\n\n\nprint('RAN AT IMPORT', flush=True)\n"
                    "raise RuntimeError('broken on purpose')\n")
    run = _grade(path, small_rubric, tmp_path / "cwd")
    assert run.outcome("loads").status == "failed" and "broken on purpose" in run.outcome("loads").message
    assert run.grade.output.count("RAN AT IMPORT") == 1 and run.grade.diagnosis == []


def test_memory_limit_comes_from_the_rubric():
    from grader.grading import rubric

    assert rubric.Limits().memory_mb == 4096
    assert rubric.load("chapter5").limits.memory_mb == 4096


# -- processes -----------------------------------------------------------------------------------------------------
PROCESSES = [("fork_children.py", 2), ("orphan_then_exit.py", 1), ("fork_bomb.py", 2)]  # (file, pids it prints)


@pytest.mark.parametrize("name, printed", PROCESSES)
def test_no_process_it_started_survives(graded, name, printed):
    run = graded(name)
    assert_normal(run)
    assert len(run.pids) >= printed  # the processes existed, and are gone (assert_normal)
    assert _gone(run.pids)
    if name == "fork_children.py":
        assert run.grade.score == run.grade.max_score  # its tensors are right: it earns them
    if name == "fork_bomb.py" and _walls()["uid"] is None:
        assert len(run.pids) < LIMITS["max_processes"]  # capped by the uid's process limit


def test_a_slot_left_with_processes_is_cleared_before_its_uid_is_reused(tmp_path, monkeypatch):
    """A grader killed with -9 leaves its last worker's processes running as that worker's uid: the next worker
    given the uid kills them first."""
    from grader.sandbox import uids

    _require("uid")
    k = uids.SLOTS - 1
    left = subprocess.Popen(["sleep", "120"], user=uids.FIRST_UID + k, group=uids.FIRST_UID + k)
    try:
        monkeypatch.setattr(uids, "_next", k)
        uid = uids.acquire(str(tmp_path))
        uids.release(uid)
        if uid != uids.FIRST_UID + k:
            pytest.skip("another grader of this run holds that slot")
        assert left.wait(timeout=5) == -signal.SIGKILL
    finally:
        left.kill()


# -- output floods -------------------------------------------------------------------------------------------------
FLOODS = ["flood_stdout.py", "flood_stderr.py"]


@pytest.mark.parametrize("name", FLOODS)
def test_output_flood_is_capped_and_noted(graded, name):
    run = graded(name)
    assert_normal(run)
    assert run.grade.score == run.grade.max_score
    assert any(n.startswith("output too large") for n in run.grade.notes)
    assert len(run.grade.output) <= 4096 and len(run.report) < 64 << 10


# -- tampering -----------------------------------------------------------------------------------------------------
TAMPERING = [  # (file, the plain sample that returns the same tensors without the tricks)
    ("tamper_torch.py", "bug_no_mask.py"),
    ("tensor_subclass.py", "bug_no_mask.py"),
    ("tamper_grader.py", "vacuous_zeros.py"),
    ("forge_results.py", "vacuous_zeros.py"),
    ("fake_pytest_output.py", "vacuous_zeros.py"),
]


@pytest.mark.parametrize("name, plain", TAMPERING, ids=[t[0] for t in TAMPERING])
def test_tampering_earns_exactly_what_its_tensors_earn(graded, name, plain):
    run, baseline = graded(name), graded(CH5_DIR / plain)
    assert_normal(run)
    assert run.grade.score == baseline.grade.score < run.grade.max_score
    assert failed(run.grade) == failed(baseline.grade)
    assert "forged" not in run.report


def test_forged_results_land_nowhere(graded):
    _require("mounts")
    run = graded("forge_results.py")
    assert run.strays == []
    assert not Path("/tmp/attention-grader-hostile-pwned").exists()  # tensor_subclass's pickle was never loaded


@pytest.mark.parametrize("path", [HOSTILE / "import_reference_importlib.py", CH5_DIR / "bug_imports_reference.py"],
                         ids=["importlib", "import statement"])
def test_importing_the_reference_zeroes_the_score(graded, path):
    run = graded(path)
    assert_normal(run)
    assert run.outcome("policy").status == "failed" and "reference" in run.outcome("policy").message
    assert run.grade.score == 0


@pytest.mark.parametrize("name", ["reference_by_path.py", "planted_by_path.py"])
def test_the_graders_files_are_hidden_from_workers(graded, name):
    _require("mounts")
    run, zeros = graded(name), graded(CH5_DIR / "vacuous_zeros.py")
    assert_normal(run)
    assert "NOT STOLEN" in run.grade.output
    assert run.grade.score == zeros.grade.score


def test_a_workers_memory_holds_no_reference_here(graded):
    """In this process the reference is loaded, so the fork server is a fresh interpreter (below: `check`'s)."""
    run, zeros = graded("reference_by_memory.py"), graded(CH5_DIR / "vacuous_zeros.py")
    assert_normal(run)
    assert "NOTHING FOUND" in run.grade.output
    assert run.grade.score == zeros.grade.score


_BEFORE_CHECK = """
import os, sys
from grader.sandbox import spawn
del os.environ["PYTHONPATH"]  # this grader's, not its fresh fork server's (which would load this file too)
if {loaded!r} == "reference":
    import grader.reference.chapter5  # in the grader's memory before its fork server starts
if {guard!r} == "unguarded":
    spawn._clean = lambda: True
forked = spawn._fork_here
spawn._fork_here = lambda: print("FORKED", r := forked(), file=sys.stderr) or r
del sys.modules["sitecustomize"]  # leaves the reference as the only thing that may stop the fork
"""


ZEROS = 5  # what zeros of the right shapes earn in chapter 5: output_shape's points


@pytest.mark.parametrize("command, loaded, guard, forked, score", [
    ("check", "nothing", "guarded", True, ZEROS), ("check", "reference", "guarded", False, ZEROS),
    ("check", "reference", "unguarded", True, 100),
    ("grade", "nothing", "guarded", True, ZEROS), ("grade", "reference", "unguarded", True, 100)])
def test_a_fork_server_is_forked_only_from_a_process_without_secrets(tmp_path, command, loaded, guard, forked, score):
    """`attention-grader check` forks its fork server from itself (its workers share its torch), and so does a
    batch before it reads the rubric (each grader process's own server is a fork of that one); a grader that has
    loaded the reference starts a fresh one. Unguarded, the sample does find the reference: the test can fail."""
    (tmp_path / "sitecustomize.py").write_text(_BEFORE_CHECK.format(loaded=loaded, guard=guard))
    sample = HOSTILE / "reference_by_memory.py"
    if command == "grade":
        (tmp_path / "class").mkdir()
        shutil.copy(sample, tmp_path / "class")
    args = [sample] if command == "check" else [tmp_path / "class", "--out", tmp_path / "out", "--workers", "1"]
    cmd = [sys.executable, "-m", "grader.frontends.cli", command, *map(str, args)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert f"FORKED {forked}" in done.stderr, done.stderr[-2000:]
    if command == "check":
        assert done.stdout.startswith(f"reference_by_memory.py: {score}/100"), done.stdout[:500]
    else:
        results = json.loads((tmp_path / "out" / "reference_by_memory.py" / "results.json").read_text())
        assert results["score"] == score, results["output"][:500]


def test_nan_everywhere_earns_only_the_shape_points(graded):
    run = graded("nan_everywhere.py")
    assert_normal(run)
    assert run.outcome("content_dependent").status == "failed"
    assert "NaN or inf" in run.outcome("content_dependent").message
    assert run.grade.score == run.outcome("output_shape").points


# -- network -------------------------------------------------------------------------------------------------------
def test_network_is_cut_off(small_rubric, tmp_path):
    from grader.grading.engine import environment

    if _walls()["net"] is not None:
        assert any(line.startswith("network NOT blocked") for line in environment())
        pytest.skip(f"the network cannot be cut off here: {_walls()['net']}")
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen()
    port = tcp.getsockname()[1]
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", port))
    code = (HOSTILE / "network.py").read_text().replace("PORT = 47813", f"PORT = {port}")
    assert f"PORT = {port}" in code
    (tmp_path / "network.py").write_text(code)
    with tcp, udp:
        run = _grade(tmp_path / "network.py", small_rubric, tmp_path / "cwd")
        tcp.setblocking(False)
        udp.setblocking(False)
        with pytest.raises(BlockingIOError):
            tcp.accept()
        with pytest.raises(BlockingIOError):
            udp.recv(100)
    assert_normal(run)
    assert "NETWORK blocked" in run.grade.output
    assert run.grade.score == run.grade.max_score
    # as root "(own network namespace)"; as a user ", in its own user namespace)" follows
    assert any(line.startswith("no network (own network namespace") for line in run.grade.environment)


# -- the walls themselves ------------------------------------------------------------------------------------------
SPY = '''
import json, os, sys
import colorsys, mpmath, sympy  # not imported by the fork server: read from disk, as the worker's uid


def listing(d):
    try:
        return sorted(os.listdir(d))
    except PermissionError:  # Landlock
        return "denied"


print("WALLS", json.dumps({"uid": os.getuid(), "cwd": os.getcwd(), "home": os.environ.get("HOME"),
      "env": sorted(os.environ), "fds": sorted(os.listdir("/proc/self/fd")), "tmp": os.listdir("/tmp"),
      "covered": {d: listing(d) for d in COVER}, "hidden": {d: listing(d) for d in HIDE},
      "pids": [p for p in os.listdir("/proc") if p.isdigit()], "pid": os.getpid()}), flush=True)


def scaled_dot_product_attention(q, k, v, causal=True):
    return q, q
'''


def test_worker_runs_under_its_own_uid_and_still_imports(tmp_path):
    """As root: a private view makes Python readable to the worker's uid even under /root (mode 700 here)."""
    from grader.exercises import EXERCISES
    from grader.grading.engine import environment
    from grader.sandbox import fs_view, uids
    from grader.sandbox.client import Subject
    from grader.sandbox.limits import Limits
    from grader.submission import loader

    _require("uid")
    plan = fs_view.view_plan()
    spy = tmp_path / "spy.py"
    spy.write_text(f"COVER = {plan['cover']!r}\nHIDE = {plan['hide']!r}\n" + SPY)
    source, entry = loader.read(spy, ("scaled_dot_product_attention",))
    subject = Subject(source, entry, list(EXERCISES["chapter5"].results), limits=Limits(load_timeout=60))
    try:
        subject.load()
    finally:
        subject.close()
    seen = json.loads(subject.output().split("WALLS ", 1)[1].splitlines()[0])
    assert uids.FIRST_UID <= seen["uid"] < uids.FIRST_UID + uids.SLOTS
    assert environment()[-1].startswith("its own uid per worker")
    assert seen["home"] == seen["cwd"]
    assert set(seen["env"]) <= {"PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "HOME", "TMPDIR"}
    if _pids_wall():  # its own PID namespace: it is PID 1 and sees no other process
        assert seen["pid"] == 1 and seen["pids"] == ["1"]
    assert len(seen["fds"]) <= 5 + _pids_wall()  # 0, 1, 2, the socket, the relay's (a PID namespace), the listing's
    if _walls()["mounts"] is None:
        exposed = {d: sorted(os.path.basename(p) for p in plan["expose"] if os.path.dirname(p) == d)
                   for d in plan["cover"]}
        denied = "denied" if _walls().get("landlock") is None else None  # Landlock: not even the empty cover
        assert all(seen["covered"][d] in (exposed[d], denied) for d in exposed), seen["covered"]
        assert all(listing in ([], denied) for listing in seen["hidden"].values()) and plan["hide"]
        # the private /tmp holds the worker's folder (or the $TMPDIR under /tmp that holds it), and what Python
        # needs from the real one: a clone under /tmp, or the cover over the closed folder that holds one (mktemp -d)
        needed = {Path(p).relative_to("/tmp").parts[0] for p in plan["expose"] + plan["cover"]
                  if Path(p).is_relative_to("/tmp") and p != "/tmp"}
        cwd = Path(seen["cwd"])
        own = set(cwd.relative_to("/tmp").parts[:1]) if cwd.is_relative_to("/tmp") else set()
        assert set(seen["tmp"]) == own | needed


def test_environment_lines_name_every_wall():
    from grader.grading.engine import environment

    lines = environment()
    assert any("limits" in line for line in lines)
    assert any("network" in line for line in lines)
    assert any("uid" in line for line in lines)
    assert any("file system view" in line for line in lines)
    if os.geteuid() == 0 and _walls()["mounts"] is None:  # the private view makes Python readable to any uid
        assert _walls()["uid"] is None


# -- through pytest and the batch command --------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["forge_results.py", "fake_pytest_output.py"])
def test_pytest_run_survives_and_is_the_graders_own(pytester, small_toml, small_rubric, graded, name):
    """pytest --submission on a file that forges results.json, or prints a fake passing run: the JSON, the
    counts, the total and the exit status are the grader's."""
    result = pytester.runpytest_subprocess("--submission", str(HOSTILE / name), "--rubric", str(small_toml),
                                           "--grade-json", "r.json", "-p", "no:cacheprovider")
    grade = graded(name).grade
    assert result.ret == 1, result.stdout.str()[-2000:]  # checks failed; not interrupted (2) or crashed (3)
    data = json.loads((pytester.path / "r.json").read_text())
    assert data["score"] == grade.score < data["max_score"]
    assert [t["extra_data"]["check_id"] for t in data["tests"]] == small_rubric.order()
    assert "forged" not in json.dumps(data)
    result.stdout.fnmatch_lines([f"Total: {grade.score:g}/{grade.max_score:g}"])
    text = result.stdout.str() + result.stderr.str()
    assert "17 passed in 0.42s" not in text and "Total: 100/100" not in text
    counts = result.parseoutcomes()
    assert counts["failed"] == len(failed(grade))
    assert counts["passed"] == sum(o.status == "passed" for o in grade.outcomes)
    assert not any((pytester.path / forged).exists() for forged in FORGED + (".hypothesis",))


def test_batch_grades_every_file_after_a_hostile_one(tmp_path, small_toml, graded, monkeypatch, capsys):
    from grader.frontends import cli

    names = ["endless_loop.py", "exit_at_import.py", "forge_results.py", "returns_none.py"]
    folder = tmp_path / "subs"
    folder.mkdir()
    for name in names:
        (folder / name).write_text((HOSTILE / name).read_text())
    monkeypatch.chdir(tmp_path)
    assert cli.main(["grade", str(folder), "--rubric", str(small_toml), "--out", "out", "--workers", "1"]) == 0
    for name in names:
        data = json.loads((tmp_path / "out" / name / "results.json").read_text())
        assert data["score"] == graded(name).grade.score
        assert "forged" not in json.dumps(data)
    assert sorted(p.name for p in folder.iterdir()) == names
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "subs"]
    assert "4 submissions" in capsys.readouterr().err


# -- the meta twin ---------------------------------------------------------------------------------------------------
# This session's fork server preloads torch's meta kernels (conftest). One `check` or `pytest --submission` does not:
# each worker then forks a twin that imports them and answers the device check's meta calls. Same verdicts, same
# messages, nothing left alive, whichever process made the call.
TWIN = [HOSTILE / name for name, _ in ON_META] + [
    CH5_DIR / name for name in ("correct_basic.py", "bug_mask_wrong_device.py", "bug_mask_cached_by_T.py", "bug_dropout.py")]
_TWIN_SCRIPT = """
import json, sys
from grader.sandbox import spawn
spawn.warm_up()
from grader.grading.engine import Grading
from grader.grading.rubric import load
rubric = load(sys.argv[1])
for path in sys.argv[2:]:
    grade = Grading(path, rubric).finish()
    print(json.dumps({"outcomes": [[o.id, o.status, o.message] for o in grade.outcomes], "output": grade.output}))
"""


@pytest.fixture(scope="session")
def twin_graded(small_toml):
    done = subprocess.run([sys.executable, "-c", _TWIN_SCRIPT, str(small_toml), *map(str, TWIN)],
                          capture_output=True, text=True, timeout=300, check=True)
    return {path: json.loads(line) for path, line in zip(TWIN, done.stdout.splitlines())}


@pytest.mark.parametrize("path", TWIN, ids=[p.name for p in TWIN])
def test_the_meta_twin_gives_the_same_verdicts(twin_graded, graded, path):
    here = graded(path).grade
    there = twin_graded[path]
    assert there["outcomes"] == [[o.id, o.status, o.message] for o in here.outcomes]
    device = next(o for o in here.outcomes if o.id == "device_placement")
    assert (device.status == "passed") == (path.name in ("correct_basic.py", "bug_dropout.py"))
    pids = [int(n) for n in re.findall(r"HOSTILE-PID (\d+)", there["output"])]
    assert len(pids) == (path.parent == HOSTILE)  # the call ran, in the twin, and the twin is gone
    assert _gone(pids)


# -- fewer walls (a student's laptop): the same protocol --------------------------------------------------------
@pytest.mark.parametrize("name", ["fork_children.py", "orphan_then_exit.py", "exit_at_import.py"])
def test_without_privileged_walls_nothing_is_left_behind_either(small_rubric, tmp_path, monkeypatch, name):
    """With no uid, mount or network wall (as for an ordinary user), the process tree and the fork server's
    orphans are killed instead, and the report says which walls were missing."""
    from grader.sandbox import confinement as walls_host

    monkeypatch.setattr(walls_host, "walls", lambda: dict.fromkeys(walls_host.WALLS, "not running as root"))
    monkeypatch.setenv(walls_host.WEAK_ENV, "1")
    run = _grade(HOSTILE / name, small_rubric, tmp_path / "cwd")
    if name != "exit_at_import.py":
        assert run.pids  # it did start processes, and they are gone:
    assert run.leftovers == []
    assert "network NOT blocked (not running as root)" in run.grade.environment
    assert any(line.startswith("no uid of its own (not running as root)") for line in run.grade.environment)


def test_every_hostile_file_has_its_test():
    named = {r[0] for r in REASONS} | {r[0] for r in ON_META} | {t[0] for t in TAMPERING} | {p[0] for p in PROCESSES} | set(FLOODS)
    named |= {"import_reference_importlib.py", "reference_by_path.py", "planted_by_path.py", "nan_everywhere.py",
              "network.py", "reference_by_memory.py", "secret_by_environ.py"}
    assert named == {p.name for p in HOSTILE.glob("*.py")}
    assert set(UNPRIVILEGED) <= named


# -- a probe that fails: no student code runs without its walls ----------------------------------------------------
def test_a_failed_probe_stops_grading_unless_weak_walls_are_chosen(tmp_path, monkeypatch, small_toml, capsys):
    from grader.frontends import cli
    from grader.sandbox import confinement as walls_host

    marker = tmp_path / "ran"
    sub = tmp_path / "spy.py"
    sub.write_text(f"open({str(marker)!r}, 'w').write('ran')\n\ndef scaled_dot_product_attention(q, k, v, causal=True):\n"
                   "    return q, q\n")
    calls = []

    def broken(args):
        calls.append(1)
        raise ValueError("a stray line on stdout")

    monkeypatch.setattr(walls_host, "_probe_once", broken)
    monkeypatch.delenv(walls_host.WEAK_ENV, raising=False)
    walls_host.walls.cache_clear()
    try:
        assert cli.main(["check", str(sub), "--rubric", str(small_toml)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "could not go up" in err[0] and walls_host.WEAK_ENV in err[0], err
        assert len(calls) == walls_host.PROBE_TRIES  # retried before giving up
        assert not marker.exists()  # no student code ran
        # chosen explicitly, grading goes on with the walls that did go up (here: none but the limits), and every
        # report says so on its first line
        walls_host.walls.cache_clear()
        monkeypatch.setenv(walls_host.WEAK_ENV, "1")
        assert cli.main(["check", str(sub), "--rubric", str(small_toml)]) == 1
        assert capsys.readouterr().out.splitlines()[0].startswith("WEAK WALLS")
        assert marker.exists()
    finally:
        walls_host.walls.cache_clear()


# -- the same corpus as an unprivileged user ---------------------------------------------------------------------------
USER = "attention-grader-test"
AS_USER = Path(__file__).with_name("as_user.py")
UNPRIVILEGED = ["reference_by_path.py", "planted_by_path.py", "import_reference_importlib.py", "forge_results.py",
                "forge_frames.py", "forge_frames_on_meta.py", "tamper_grader.py", "network.py", "fork_children.py"]
_REACH = '''
import glob, os
CLASS = {classmates!r}
reached = []
for path in glob.glob(CLASS + "/*.py"):
    try:
        reached.append(open(path).read()[:20])
    except OSError:
        pass
for pid in [p for p in os.listdir("/proc") if p.isdigit() and p != str(os.getpid())]:
    try:
        open(f"/proc/{{pid}}/cwd/attention-grader-hostile-forged", "w").write("forged")
        reached.append("cwd of " + pid)
    except OSError:
        pass
print("REACHED", len(reached), reached[:3], flush=True)


def scaled_dot_product_attention(q, k, v, causal=True):
    return q, q
'''
_USER_SCRIPT = """
import json, sys
from grader.sandbox import spawn
spawn.warm_up(meta=True)
from grader.grading.engine import Grading
from grader.grading.rubric import load
rubric = load(sys.argv[1])
for path in sys.argv[2:]:
    grade = Grading(path, rubric).finish()
    print(json.dumps({"score": grade.score, "failed": sorted(o.id for o in grade.outcomes if o.status == "failed"),
                      "output": grade.output, "environment": grade.environment}), flush=True)
"""


@pytest.fixture(scope="session")
def user_graded(small_rubric, small_toml):
    """As an unprivileged user (created here): the samples where walls matter, and a file that reaches for its
    classmates' files and for every other process's working folder."""
    if os.geteuid() != 0:
        pytest.skip("creating the unprivileged user needs root")
    import shutil
    import tempfile

    from grader.sandbox.clock import MAX_STRETCH

    shared = Path(tempfile.mkdtemp(prefix="attention-grader-as-user-"))
    try:
        shared.chmod(0o755)
        classmates = shared / "class"
        classmates.mkdir()
        (classmates / "alice.py").write_text("ALICE SECRET SOLUTION\n")
        (shared / "rubric.toml").write_text(small_toml.read_text())
        reach = shared / "reach.py"
        reach.write_text(_REACH.format(classmates=str(classmates)))
        subs = []
        for name in UNPRIVILEGED:
            (shared / name).write_text((HOSTILE / name).read_text())
            subs.append(shared / name)
        for p in shared.rglob("*"):
            p.chmod(0o755 if p.is_dir() else 0o644)
        env = {k: v for k, v in os.environ.items() if k not in ("ATTENTION_GRADER_ALLOW_WEAK_WALLS",)}
        done = subprocess.run([sys.executable, str(AS_USER), USER, "--", sys.executable, "-c", _USER_SCRIPT,
                               str(shared / "rubric.toml"), *map(str, subs + [reach])],
                              capture_output=True, text=True, timeout=240 * MAX_STRETCH, cwd=shared, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        lines = done.stdout.splitlines()
        assert len(lines) == len(subs) + 1, done.stdout[-2000:] + done.stderr[-2000:]
        forged = _forged_paths(shared)
        return {**{n: json.loads(line) for n, line in zip(UNPRIVILEGED, lines)}, "reach": json.loads(lines[-1]),
                "forged": forged}
    finally:
        shutil.rmtree(shared, ignore_errors=True)


@pytest.mark.parametrize("name", UNPRIVILEGED)
def test_as_a_normal_user_every_sample_keeps_its_verdict(user_graded, graded, name):
    here, there = graded(name).grade, user_graded[name]
    assert (there["score"], there["failed"]) == (here.score, sorted(failed(here)))
    assert "STOLEN" not in there["output"].replace("NOT STOLEN", "")
    assert user_graded["forged"] == set()


def test_as_a_normal_user_no_classmate_and_no_other_process_is_reached(user_graded):
    reach = user_graded["reach"]
    assert "REACHED 0 []" in reach["output"], reach["output"]
    env = reach["environment"]
    assert any(line.startswith("no network") for line in env)
    assert any(line.startswith("a private file system view") for line in env)
    assert any(line.startswith("its own PID namespace") for line in env)
    assert any(line.startswith("Landlock") for line in env)


# -- the course secret -----------------------------------------------------------------------------------------------
SECRET = "attention-grader-test-secret-4d1c"
_UNGUARDED = """
from grader.sandbox import spawn
spawn.hold = lambda: None
spawn._started_with_kept_out = lambda: False
"""


def _secret_run(small_toml, guard: str, prefix: list[str] = (), cwd=None, sample: Path = HOSTILE / "secret_by_environ.py") -> str:
    """secret_by_environ.py graded by a fresh, clean process started with the course secret in its environment (as
    `attention-grader check` is: its fork server a fork of itself): what the file printed."""
    script = (_UNGUARDED if guard == "unguarded" else "") + _USER_SCRIPT
    env = {**{k: v for k, v in os.environ.items() if k != "ATTENTION_GRADER_ALLOW_WEAK_WALLS"}, "ATTENTION_GRADER_SECRET": SECRET}
    done = subprocess.run([*prefix, sys.executable, "-c", script, str(small_toml), str(sample)],
                          capture_output=True, text=True, timeout=300, env=env, cwd=cwd)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])["output"]


@pytest.mark.parametrize("guard, found", [("guarded", False), ("unguarded", True)])
def test_the_course_secret_in_the_environment_reaches_no_worker(small_toml, guard, found):
    """Taken out of the environment before any fork server starts, and no fork server is forked from a process
    that started with it: a worker's own memory (its stack's environment strings) never holds it."""
    printed = _secret_run(small_toml, guard)
    assert ("SECRET FOUND: " + SECRET in printed) is found, printed
    assert found or "SECRET NOT FOUND" in printed


def test_as_a_normal_user_the_course_secret_reaches_no_worker(small_toml):
    if os.geteuid() != 0:
        pytest.skip("creating the unprivileged user needs root")
    import tempfile

    shared = Path(tempfile.mkdtemp(prefix="attention-grader-as-user-"))
    try:
        shared.chmod(0o755)
        for name, text in (("rubric.toml", small_toml.read_text()), ("secret_by_environ.py", (HOSTILE / "secret_by_environ.py").read_text())):
            (shared / name).write_text(text)
            (shared / name).chmod(0o644)
        printed = _secret_run(shared / "rubric.toml", "guarded", [sys.executable, str(AS_USER), USER, "--"], cwd=shared,
                              sample=shared / "secret_by_environ.py")
    finally:
        shutil.rmtree(shared, ignore_errors=True)
    assert "SECRET NOT FOUND" in printed and SECRET not in printed
