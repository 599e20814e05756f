"""The batch command's Dask back end (`grade --scheduler`): each submission is one Dask task, graded in a warm
grader process on a Dask worker; everything that is state stays here.

The client (this process) keeps the gradebook, the output files and the progress line, and commits each result
the moment it arrives, so a killed client, a lost worker or a restarted scheduler loses nothing finished and the
same command resumes. A task carries the bytes of the submission's staged copy (submission.staging: a file, or a
folder's files as a small tar archive; workers share no file system with the client), or why it could not be staged,
with the rubric and the client's grader hash; it returns bytes:
JSON holding the grade and the feedback pages, which this process writes where the local pool's grader processes
write them. Nothing here imports Dask until --scheduler asks for it, and the core install does not pull it.
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import tarfile
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from grader.frontends.warm_grader import GraderLost, graders
from grader.reports.files import write_atomic

if TYPE_CHECKING:
    from grader.submission.staging import Staged

DASK_MISSING = "needs Dask: pip install 'attention-grader[dask]'"
CONNECT_TIMEOUT = "10s"  # an unreachable scheduler is one line after this long, not a hang
FILE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*\Z")  # a feedback file a worker may send: a plain name
ADDRESS = re.compile(r"(tcp|tls|ws|wss|inproc|ucx)://([^\s/:]+|\[[0-9a-fA-F:]+\])(:(\d+))?\Z")  # scheme, host, port


class Unavailable(Exception):
    """The cluster cannot be used: one line for the teacher, exit status 2."""


def check_address(text: str) -> str:
    """--scheduler's value: local:N, or a scheduler address such as tcp://HOST:8786 (ValueError says what is wrong,
    or that Dask is not installed: before the rubric is read, so a missing extra costs no torch import)."""
    import importlib.util

    try:
        found = importlib.util.find_spec("distributed") is not None
    except (ImportError, ValueError):  # ValueError: blocked in sys.modules
        found = False
    if not found:
        raise ValueError(DASK_MISSING)
    if text.startswith("local:"):
        n = text[len("local:"):]
        if not n.isdigit() or int(n) < 1:
            raise ValueError(f"local:N takes a whole number of workers >= 1, not {text!r}")
        return text
    m = ADDRESS.match(text)
    if not m or (m[4] is not None and not 0 < int(m[4]) < 65536):
        raise ValueError(f"must be a scheduler address such as tcp://HOST:8786, or local:N, not {text!r}")
    return text


def connect(address: str, tasks: int) -> Backend:
    """The cluster at `address`, or local:N started here, with min(N, tasks) grader processes warming up meanwhile."""
    if address.startswith("local:"):  # before Dask's import and the cluster's start, which start threads
        graders.prestart(min(int(address[len("local:"):]), tasks))
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError:
        graders.close()
        raise Unavailable(f"--scheduler {DASK_MISSING}") from None
    import logging

    cluster = None
    try:
        if address.startswith("local:"):
            # A task whose worker dies is retried once elsewhere, then fails (the default retries it 3 times). No
            # dashboard here, so no stack samples for its profile, and the watchdog tick (20 ms), memory monitor
            # (100 ms) and system monitor (500 ms) of each Dask process run at 1-5 s: idle, they took 4-10 % of a
            # core from the graders beside them (benchmarks/HISTORY.md). The workers are threads of this process:
            # a task only waits for its grader process, and worker processes cost their start and a copy of every
            # task and reply. The scheduler's HTTP server takes another port where 8787 is taken, and says so.
            with dask.config.set({"distributed.scheduler.allowed-failures": 1, "distributed.worker.profile.enabled": False,
                                  "distributed.admin.tick.interval": "1s",
                                  "distributed.worker.memory.monitor-interval": "1s",
                                  "distributed.admin.system-monitor.interval": "5s"}), warnings.catch_warnings():
                warnings.filterwarnings("ignore", "Port .* is already in use", UserWarning)
                cluster = LocalCluster(n_workers=int(address[len("local:"):]), threads_per_worker=1, processes=False,
                                       dashboard_address=None, silence_logs=logging.ERROR)
                client = Client(cluster)  # in this process beside the scheduler: the same slower tick
        else:
            _refused(address)
            client = Client(address, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError) as e:
        if cluster is not None:
            cluster.close()
        graders.close()
        raise Unavailable(f"--scheduler {address}: no scheduler answers there ({str(e).splitlines()[0]})") from None
    return Backend(client, cluster, address)


def _refused(address: str) -> None:
    """ConnectionRefusedError at once where nothing listens at a TCP scheduler address (a mistyped port), which
    Dask's Client would retry until its timeout; an address that does not answer at all is left to that timeout."""
    import socket

    m = ADDRESS.match(address)
    if m is None or m[1] not in ("tcp", "tls", "ws", "wss"):
        return
    try:
        socket.create_connection((m[2].strip("[]"), int(m[4] or 8786)), timeout=1).close()
    except ConnectionRefusedError:
        raise
    except OSError:
        pass


class Backend:
    """A connected client (and the local cluster it started, for local:N); a context manager that closes both."""

    def __init__(self, client, cluster, address: str):
        self.client, self.cluster, self.address = client, cluster, address

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        import logging

        logging.getLogger("distributed").setLevel(logging.CRITICAL)  # a closing cluster's chatter is not news
        try:
            self.client.close()
            if self.cluster is not None:
                self.cluster.close()
        except Exception:  # noqa: BLE001 - the grades are committed; a cluster that will not close is not an error
            pass
        graders.close()  # a local cluster's worker threads started them here: none outlives the command

    def describe(self) -> str:
        """What grades: '2 Dask worker threads, scheduler tcp://...' (a cluster that is still starting has 0)."""
        where = self.address if self.cluster is None else f"{self.client.scheduler.address} ({self.address})"
        return f"{self.threads()} Dask worker threads, scheduler {where}"

    def threads(self) -> int:
        return sum(self.client.nthreads().values())

    def grade_all(self, todo: list[tuple[str, Staged, str]], rubric, loading: dict, draws, key: str, out: Path,
                  save, progress) -> dict[str, str]:
        """As pool.LocalPool.grade_all, on the cluster: `save(name, hash, grade dict)` each grade as it arrives, after its
        feedback pages are written; `progress.step` after each. Returns name -> why for submissions that could
        not be graded."""
        from distributed import as_completed

        from grader.frontends.store import release

        common = dict(rubric=rubric.model_dump_json(), origin=rubric.origin, key=key, loading=loading, release=release(),
                      salt=draws.salt.hex())  # the course secret travels to the teacher's workers, never back
        window = max(16, 2 * self.threads())  # submissions in flight: the scheduler holds their bytes, not all of them
        pending = iter(todo)
        names: dict = {}
        errors: dict[str, str] = {}

        def submit_next() -> None:
            for name, staged, h in pending:
                archive = pack(staged.copy) if staged.copy is not None else b""
                fut = self.client.submit(grade_task, str(staged.shown), archive, staged.refused, h, common,
                                         pure=False, retries=1,
                                         key=f"attention-grader-{_slug(name)}-{os.urandom(6).hex()}")
                names[fut] = (name, h)
                running.add(fut)
                return

        running = as_completed([])
        for _ in range(window):
            submit_next()
        for fut in running:
            name, h = names.pop(fut)
            where = None
            try:
                reply = json.loads(fut.result())
                where = reply.get("worker")
                if "error" in reply:
                    raise Failed(reply["error"])
                write_feedback(out / name, reply["files"])
                save(name, h, json.loads(reply["grade"]))
                where = None
            except Exception as e:  # noqa: BLE001 - a lost worker or a failed task loses only its own submission
                errors[name] = _why(e)
                where = where or _worker_of(e)
            fut.release()
            progress.step(failed_on=where if name in errors else None)
            submit_next()
        return errors


class Failed(Exception):
    """A task that ran and reported an error (the grader's one line)."""


def _why(e: Exception) -> str:
    name = type(e).__name__
    if name == "KilledWorker":
        return "its Dask worker died while grading it, twice (out of memory, or killed); the run went on without it"
    if isinstance(e, Failed):
        return str(e)
    if name == "FutureCancelledError":  # the scheduler went away or restarted: nothing of this one was kept there
        reason = str(e).rpartition("reason: ")[2].rstrip(".") or "unknown"
        return f"the Dask cluster dropped it ({reason})"
    return f"{name}: {e}".splitlines()[0]


def _worker_of(e: Exception) -> str:
    last = getattr(e, "last_worker", None)
    return getattr(last, "address", None) or "the cluster"


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:60]


def write_feedback(folder: Path, files: dict[str, str]) -> None:
    """The feedback pages a worker drew, where the local pool's grader process writes them (feedback_page.write)."""
    from grader.reports.feedback_page import PICTURE

    folder.mkdir(parents=True, exist_ok=True)
    for name, data in sorted(files.items()):
        if not FILE_NAME.match(name):
            raise Failed(f"the worker sent a feedback file named {name!r}")
        blob = base64.b64decode(data)
        if name.endswith((".md", ".html")):
            write_atomic(folder / name, blob.decode("utf-8"))
        else:
            (folder / name).write_bytes(blob)
    if PICTURE not in files:
        (folder / PICTURE).unlink(missing_ok=True)  # a picture from an earlier run would no longer fit


# -- the submission's bytes ----------------------------------------------------------------------------------
def pack(copy: Path) -> bytes:
    """A staged copy as a tar archive of one member named like it: a file, or a folder of regular files."""
    def keep(info: tarfile.TarInfo):
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        return info

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=1) as tar:
        tar.add(copy, arcname=copy.name, filter=keep)
    return buf.getvalue()


def unpack(archive: bytes, scratch: Path) -> Path:
    """The staged copy again, under `scratch`; tarfile's data filter refuses anything but files and folders
    inside it (an archive is the client's, but a worker trusts no bytes it did not check)."""
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        members = tar.getmembers()
        if hasattr(tarfile, "data_filter"):
            tar.extractall(scratch, filter="data")
        else:  # Python 3.11.0-3.11.3 (Debian 12's) has no filters: the same refusals, by hand
            for m in members:
                parts = Path(m.name).parts
                if not (m.isfile() or m.isdir()) or Path(m.name).is_absolute() or ".." in parts or not parts:
                    raise tarfile.TarError(f"{m.name!r}: not a file or folder inside the archive")
                m.mode &= 0o755 if m.isdir() else 0o644
            tar.extractall(scratch, members)
    return scratch / members[0].name.split("/")[0]


# -- on a Dask worker ----------------------------------------------------------------------------------------
def grade_task(path: str, archive: bytes, refused: str, h: str, common: dict) -> bytes:
    """A Dask task: grade one staged submission (or its refusal) in this worker's warm grader process; JSON bytes
    back, never an exception for a submission's own trouble (a dead grader process raises, for Dask's one retry)."""
    from distributed import get_worker

    worker = get_worker()
    try:  # the worker's own scratch folder (--local-directory, dask-jobqueue's local_directory)
        with tempfile.TemporaryDirectory(prefix="attention-grader-task-", dir=worker.local_directory) as tmp:
            copy = unpack(archive, Path(tmp) / "copy") if archive else None
            folder = Path(tmp) / "feedback"
            req = dict(common, path=path, copy=str(copy) if copy else None, refused=refused, folder=str(folder), hash=h)
            reply = graders.run(req)
            if "grade" in reply:
                reply["files"] = {p.name: base64.b64encode(p.read_bytes()).decode("ascii")
                                  for p in sorted(folder.iterdir()) if p.is_file()}
    except GraderLost:
        raise
    except Exception as e:  # noqa: BLE001 - this submission's trouble, not the worker's
        reply = {"error": f"{type(e).__name__}: {e}".splitlines()[0]}
    reply["worker"] = worker.address
    return json.dumps(reply).encode()
