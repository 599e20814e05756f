"""`attention-grader grade --scheduler`: the Dask back end, on `local:N` (a LocalCluster whose worker threads, in the
command's process, each grade in a grader process of their own) and on a LocalCluster of worker processes, as a
cluster of machines has them (a Dask worker process is daemonic, so it starts its grader process with subprocess).

Its output is the local pool's byte for byte; a Dask worker killed mid-run loses nothing; a task that kills its worker
twice is one submission's error, not the run's; a re-run grades nothing; bad or unreachable schedulers and a missing
Dask are one line and exit status 2, and without --scheduler Dask is never imported."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import CH5_DIR, SUBMISSIONS
from test_batch import BROKEN, _gone, _rows, files

distributed = pytest.importorskip("distributed", reason="the Dask back end needs attention-grader[dask]; "
                                  "`make test` installs it")

from grader.frontends import cluster, warm_grader  # noqa: E402

# correct and buggy, a file, a folder and notebooks: the ways a submission's bytes travel
SAMPLES = {
    "chapter5": ["correct_basic.py", "correct_folder", "bug_zero_fill.py", "bug_notebook_zero_fill.ipynb"],
    "masked_self_attention": ["correct_where.py", "bug_padding_ignored.py"],
}


def run(cwd, *args, timeout=600, pre: str = "") -> subprocess.CompletedProcess:
    """The batch command in `cwd`, given relative folders as `make grade` does (the feedback names them)."""
    code = f"{pre}import sys; from grader.frontends.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, "grade", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """A folder with one class folder per rubric, copies of the samples."""
    top = tmp_path_factory.mktemp("dask")
    for rubric, names in SAMPLES.items():
        klass = top / f"class-{rubric}"  # not the rubric's name: `--rubric NAME` would read the folder
        klass.mkdir()
        for name in names:
            src = SUBMISSIONS / rubric / name
            shutil.copytree(src, klass / name) if src.is_dir() else shutil.copy(src, klass / name)
    (top / "class-chapter5" / "broken.py").write_text(BROKEN)
    (top / "class-chapter5" / "bob").mkdir()  # a classmate's file, linked: refused alike on both back ends
    (top / "class-chapter5" / "bob" / "attention.py").symlink_to(top / "class-chapter5" / "correct_basic.py")
    return top


@pytest.fixture(scope="module")
def local(root):
    """The local pool's output for each class folder: what the Dask back end must reproduce."""
    for rubric in SAMPLES:
        result = run(root, f"class-{rubric}", "--rubric", rubric, "--out", f"local-{rubric}", "--workers", "2")
        assert result.returncode == 0, result.stderr
    return {rubric: files(root / f"local-{rubric}") for rubric in SAMPLES}


def same_files(got: dict, want: dict) -> None:
    assert {"results.json", "gradebook.csv", "summary.md"} <= {Path(p).name for p in got}
    assert sorted(got) == sorted(want)
    for name in want:
        assert got[name] == want[name], name


@pytest.fixture(scope="module")
def on_local_cluster(root, local):
    """The masked_self_attention class graded with `--scheduler local:2` (chapter5's goes to a cluster below whose
    worker is killed mid-run: the same check of the files, on a harder run)."""
    result = run(root, "class-masked_self_attention", "--rubric", "masked_self_attention", "--out", "dask-masked",
                 "--scheduler", "local:2")
    assert result.returncode == 0, result.stderr
    return root / "dask-masked", result.stderr


def test_a_local_cluster_writes_the_local_pools_files_byte_for_byte(local, on_local_cluster):
    out, said = on_local_cluster
    same_files(files(out), local["masked_self_attention"])
    assert "with 2 Dask worker threads, scheduler inproc://" in said and "graded 2/2" in said
    assert "Warning" not in said  # where another cluster's scheduler holds port 8787 meanwhile (`scheduler` below)


def test_a_rerun_grades_nothing_and_starts_no_cluster(root, on_local_cluster):
    out, _ = on_local_cluster
    before = files(out)
    t = time.monotonic()
    result = run(root, "class-masked_self_attention", "--rubric", "masked_self_attention", "--out", out,
                 "--scheduler", "local:2")
    assert result.returncode == 0, result.stderr
    assert "0 to grade" in result.stderr and "Dask" not in result.stderr
    assert time.monotonic() - t < 30
    assert files(out) == before


def test_a_local_cluster_starts_its_grader_processes_as_it_connects_and_no_more_than_it_needs(monkeypatch):
    """local:N's grader processes start as it connects, before Dask's import and the cluster's start, one per worker
    thread that will have a submission; none outlives the cluster."""
    started = []

    def start(self):
        proc = subprocess.Popen(["sleep", "60"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.started.append(proc)
        started.append(proc)
        return proc

    monkeypatch.setattr(warm_grader.Graders, "_start", start)
    monkeypatch.setattr(warm_grader.Graders, "_fork", start)  # forked or not: that depends on this process's threads
    with cluster.connect("local:3", tasks=2) as backend:
        assert len(started) == 2 and backend.threads() == 3
    assert len(started) == 2 and all(proc.poll() is not None for proc in started)


def test_a_local_clusters_grader_processes_are_forks_of_the_command(tmp_path):
    """As the local pool's: forked as the command connects (one thread, torch imported, its fork server started), so
    they do not import torch again. (Their workers come from fork servers of their own, as the local pool's graders'
    do: sandbox.spawn.own_server; a grader a worker thread replaces later is its own interpreter.)"""
    code = ("from grader.frontends import startup, cluster, warm_grader; startup.start('chapter5', meta=True)\n"
            "with cluster.connect('local:2', tasks=2):\n"
            "    print(sorted(type(p).__name__ for p in warm_grader.graders.started))")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[-2] == "['_Forked', '_Forked']", done.stdout + done.stderr


# -- workers that die --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def scheduler():
    """A LocalCluster of 2 worker processes in this process, as a cluster of machines has: (client, address)."""
    import logging

    import dask

    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        lc = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                      silence_logs=logging.CRITICAL)
    client = distributed.Client(lc)
    yield client, lc.scheduler_address
    client.close()
    lc.close()


def test_a_dask_worker_killed_mid_run_loses_nothing(root, local, scheduler):
    client, address = scheduler
    out = root / "killed"
    proc = subprocess.Popen([sys.executable, "-m", "grader.frontends.cli", "grade", "class-chapter5", "--out", "killed",
                             "--scheduler", address], cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None and not _rows(out / "gradebook.sqlite"):
        time.sleep(0.2)
    assert proc.poll() is None, "the run finished before a worker could be killed"
    victim = next(iter(client.run(os.getpid).values()))
    graders = _children(victim)
    os.kill(victim, signal.SIGKILL)  # mid-run: the other submissions are in flight on both workers
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    same_files(files(out), local["chapter5"])  # nothing lost; the retried submission graded as the local pool did
    assert graders and _gone(graders), "a killed Dask worker's grader processes outlived it"


def _children(pid: int) -> list[int]:
    """Every thread's children: a Dask worker starts its grader processes from its task threads."""
    found = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                found += [int(p) for p in f.read().split()]
        except OSError:
            pass
    return found


def test_a_task_that_kills_its_worker_twice_is_that_submissions_error(root, scheduler, monkeypatch, tmp_path):
    """Retried once elsewhere, then recorded as an error; the run goes on."""
    client, address = scheduler
    client.wait_for_workers(2, timeout=120)  # the nanny restarts a killed worker
    from grader.checks.draws import Draws
    from grader.frontends.grade import Progress
    from grader.frontends.store import grader_hash
    from grader.grading.rubric import load

    def deadly(path, archive, refused, h, common):  # pickled by value: the test module is not importable on workers
        if path.endswith("die.py"):
            os._exit(1)  # as the OOM killer would end the worker
        from grader.frontends.cluster import grade_task

        return grade_task(path, archive, refused, h, common)

    monkeypatch.setattr(cluster, "grade_task", deadly)
    (tmp_path / "die.py").write_text(BROKEN)
    (tmp_path / "b.py").write_text(BROKEN)
    saved = {}
    backend = cluster.Backend(client, None, address)
    staged = stage_all({n: tmp_path / n for n in ("die.py", "b.py")}, tmp_path / "staged")
    todo = [(n, s, "h" + n) for n, s in staged.items()]
    rubric = load("chapter5")
    progress = Progress(len(todo), backend.describe(), stream=io.StringIO())
    errors = backend.grade_all(todo, rubric, {}, Draws(), grader_hash(rubric, {}, Draws()), tmp_path / "out",
                               lambda name, h, grade: saved.setdefault(name, grade), progress)
    assert list(errors) == ["die.py"] and "died while grading it, twice" in errors["die.py"]
    assert list(saved) == ["b.py"] and saved["b.py"]["score"] == 0  # the run went on
    assert (tmp_path / "out" / "b.py" / "feedback.md").read_text().startswith("# b.py: 0/100")
    assert "graded 2/2" in progress.stream.getvalue() and "failed: 1 on tcp://" in progress.stream.getvalue()


# -- bad input ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["local:0", "local:two", "nonsense", "http://host:8786", "tcp://host:99999", "tcp://"])
def test_a_bad_scheduler_value_is_one_line_and_exit_2(tmp_path, value):
    (tmp_path / "a.py").write_text(BROKEN)
    result = run(tmp_path, ".", "--out", "out", "--scheduler", value, timeout=60)
    assert result.returncode == 2, result.stderr
    assert "--scheduler" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_an_unreachable_scheduler_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "a.py").write_text(BROKEN)
    result = run(tmp_path, ".", "--out", "out", "--scheduler", "tcp://127.0.0.1:9", timeout=120)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("attention-grader: --scheduler tcp://127.0.0.1:9: no scheduler answers there")
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert not (tmp_path / "out" / "a.py").exists()


BLOCK_DASK = "import sys; sys.modules['distributed'] = None; sys.modules['dask'] = None\n"  # as if not installed


def test_without_dask_the_local_pool_runs_and_scheduler_says_what_to_install(tmp_path):
    (tmp_path / "a.py").write_text(BROKEN)
    result = run(tmp_path, ".", "--out", "out", pre=BLOCK_DASK, timeout=300)
    assert result.returncode == 0 and "1 to grade" in result.stderr, result.stderr  # --scheduler absent: no Dask
    (tmp_path / "b.py").write_text(BROKEN)
    result = run(tmp_path, ".", "--out", "out", "--scheduler", "local:1", pre=BLOCK_DASK, timeout=300)
    assert result.returncode == 2
    assert result.stderr.strip() == f"attention-grader: error: argument --scheduler: {cluster.DASK_MISSING}"


# -- the submission's bytes --------------------------------------------------------------------------------------
def stage_all(subs: dict, into: Path) -> dict:
    from grader.frontends.grade import stage_all as stage
    from grader.grading.rubric import load

    into.mkdir()
    return stage(subs, into, load("chapter5"))


@pytest.fixture(params=["filters", "no filters"])
def tar_filters(request, monkeypatch):
    """tarfile with its extraction filters, and as Python 3.11.0-3.11.3 (Debian 12's) has it, without them."""
    if request.param == "no filters":
        import tarfile

        monkeypatch.delattr(tarfile, "data_filter", raising=False)


def test_a_folder_travels_as_its_staged_files(tmp_path, tar_filters):
    src = tmp_path / "src" / "correct_folder"
    shutil.copytree(CH5_DIR / "correct_folder", src)
    (src / "__pycache__").mkdir()
    (src / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (src / "notes.txt").write_text("not Python: not copied, not sent")
    staged = stage_all({"correct_folder": src}, tmp_path / "staged")["correct_folder"]
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    copy = cluster.unpack(cluster.pack(staged.copy), scratch)
    assert copy.resolve().is_relative_to(scratch.resolve())
    want = sorted(p.relative_to(src).as_posix() for p in src.rglob("*.py") if "__pycache__" not in p.parts)
    assert sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file()) == want
    for rel in want:
        assert (copy / rel).read_bytes() == (src / rel).read_bytes()


@pytest.mark.parametrize("member", ["link", "absolute", "parent"])
def test_an_archive_with_anything_but_files_inside_it_is_refused(tmp_path, tar_filters, member):
    """A worker unpacks only files and folders inside its scratch folder, with or without tarfile's filters."""
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo({"link": "a/link.py", "absolute": "/tmp/x.py", "parent": "a/../../x.py"}[member])
        if member == "link":
            info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
            tar.addfile(info)
        else:
            info.size = 1
            tar.addfile(info, io.BytesIO(b"x"))
    (tmp_path / "scratch").mkdir()
    try:  # an absolute name may instead land inside the scratch folder (the data filter strips its slash)
        cluster.unpack(buf.getvalue(), tmp_path / "scratch")
        assert member == "absolute"
    except tarfile.TarError:
        pass
    assert not Path("/tmp/x.py").exists() and not (tmp_path / "x.py").exists()
    assert not list((tmp_path / "scratch").rglob("link.py"))


def test_a_link_out_of_a_submission_is_refused_where_it_is_staged(local):
    """Bob's file is a link to a classmate's: refused before either back end sees a byte of it (the Dask runs
    reproduce these files byte for byte)."""
    bob = json.loads(local["chapter5"]["bob/results.json"])
    assert bob["score"] == 0 and "a symbolic link that leads out of the submission" in bob["tests"][0]["output"]


def test_the_warm_grader_refuses_a_rubric_it_would_grade_differently(tmp_path):
    from grader.grading.rubric import load

    rubric = load("chapter5")
    (tmp_path / "a.py").write_text(BROKEN)
    from grader.checks.draws import Draws
    from grader.frontends import store

    copy = stage_all({"a.py": tmp_path / "a.py"}, tmp_path / "staged")["a.py"].copy
    req = dict(path="a.py", copy=str(copy), refused="", folder=str(tmp_path / "fb"), hash="", loading={},
               rubric=rubric.model_dump_json(), origin=rubric.origin, key="not-this-grader", release="0.0.1", salt="")
    good = dict(req, key=store.grader_hash(rubric, {}, Draws()))
    proc = subprocess.run([sys.executable, "-m", "grader.frontends.warm_grader"],
                          input=json.dumps(req) + "\n" + json.dumps(good) + "\n", capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    bad, ok = map(json.loads, proc.stdout.splitlines())
    assert "grades differently" in bad["error"] and "0.0.1 there" in bad["error"] and "grade" not in bad
    grade = json.loads(ok["grade"])
    assert grade["submission"] == "a.py" and grade["score"] == 0
    assert {p.name for p in (tmp_path / "fb").iterdir()} >= {"feedback.md", "feedback.html"}


def test_the_warm_grader_forks_its_fork_server_from_itself(tmp_path):
    """Its fork server is a fork of it, taken once torch is imported (sandbox.spawn: it warms up before it reads a
    request or starts a thread), not a fresh interpreter importing torch again beside it: the Dask back end's
    start-up then costs one torch import per worker, as the local pool's forked graders cost none."""
    proc = subprocess.Popen([sys.executable, "-m", "grader.frontends.warm_grader"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        proc.stdin.write(json.dumps({}) + "\n")  # a bad request: answered once warm, and the process stays
        proc.stdin.flush()
        assert "error" in json.loads(proc.stdout.readline())
        commands = [Path(f"/proc/{p}/cmdline").read_bytes().split(b"\0") for p in _children(proc.pid)]
        servers = [c for c in commands if b"grader.frontends.warm_grader" in c or b"multiprocessing.forkserver" in b" ".join(c)]
        assert servers and all(b"grader.frontends.warm_grader" in c for c in servers), commands
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
