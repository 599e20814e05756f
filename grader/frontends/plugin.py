"""pytest plugin: `pytest --submission PATH` collects one item per rubric check and grades that file.

Without --submission every hook returns at once, so pytest behaves as if the plugin were not installed. With it, a
grading process (frontends.pytest_grading, started by the pin as pytest starts or parses its arguments) grades and
words each check as pytest runs its item: pytest's own process imports neither torch nor the checks.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import NoReturn

import pytest

_KEY = pytest.StashKey["_State"]()
_REFUSED = pytest.StashKey[str]()


def pytest_addoption(parser):
    from grader.frontends import options

    group = parser.getgroup("attention-grader", "grading attention submissions")
    group.addoption("--submission", metavar="PATH", help="grade this .py file, notebook or folder (runs only its checks)")
    group.addoption("--grade-json", metavar="FILE", help="write Gradescope results.json here")
    group.addoption("--device", default="cpu", choices=["cpu", "cuda"], help="device for the device_placement check")
    options.add_submission_options(group.addoption)


class _State:
    """The grading process (frontends.pytest_grading) and what it said: pytest's process asks, it grades and words."""

    def __init__(self, config):
        from grader.frontends import options, pytest_pin

        self.proc = pytest_pin.grading_process()
        self.summary: dict | None = None
        self.ran: list[str] | None = None  # the items run so far, once the plan is sent
        reply = self.ask({"start": {
            "submission": config.getoption("submission"), "rubric": config.getoption("rubric"),
            "device": config.getoption("device"), "reading": options.reading(config.getoption).as_dict()}})
        if "error" in reply:
            self.end()
            pytest.exit(reply["error"], returncode=2)
        self.order: list[str] = reply["order"]

    def ask(self, request: dict) -> dict:
        self.tell(request)
        return self.reply()

    def tell(self, request: dict) -> None:
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
        except OSError:
            self.lost()

    def reply(self) -> dict:
        try:
            line = self.proc.stdout.readline()
        except OSError:
            line = ""
        if not line:
            self.lost()
        return json.loads(line)

    def lost(self) -> NoReturn:
        code = self.proc.wait()
        pytest.exit(f"attention-grader: the grading process ended (exit status {code})", returncode=3)

    def outcome(self, session, cid: str) -> dict:
        """The outcome of `cid`, the next item: the plan (the items pytest will run) goes out before the first."""
        if self.ran is None:
            self.ran = []
            self.tell({"plan": [item.check_id for item in session.items]})
        self.ran.append(cid)
        reply = self.reply()
        if reply.get("outcome") != cid:
            pytest.exit(f"attention-grader: pytest ran {cid} out of the grading's order", returncode=3)
        return reply

    def finish(self, grade_json: str | None) -> dict:
        self.tell({"finish": {"grade_json": grade_json, "ran": self.ran or []}})
        reply = self.reply()
        while "outcome" in reply:  # graded for items pytest did not run (-x): the finish grades without them
            reply = self.reply()
        return reply

    def end(self, finished: bool = False) -> None:
        """finished: it was told to finish, and ends by itself once its fork server has (killed only if it hangs)."""
        import subprocess

        from grader.frontends import pytest_pin

        try:
            self.proc.wait(timeout=60 if finished else 0)
        except subprocess.TimeoutExpired:
            pass
        pytest_pin.end(self.proc)


def _state(config) -> _State | None:
    return config.stash.get(_KEY, None)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config):
    """Before pytest imports any conftest: none may run in the grading process (a student's folder may hold one).
    Fails closed (`pytest_cmdline_main`) where pytest looked for its configuration itself rather than being pinned
    (frontends.pytest_pin), where the configuration it read lies in the submission, and where pytest-xdist would
    start other pytest processes."""
    ns = early_config.known_args_namespace
    submission = getattr(ns, "submission", None)
    if not submission:
        return
    from grader.frontends import pytest_pin

    ns.noconftest = True
    ini = early_config.inipath
    how = f"grade it with pytest's own configuration: pytest {pytest_pin.PIN} --submission ..., or attention-grader check"
    if not ns.inifilename:
        refused = (f"pytest looked for its configuration around the submission (attention_grader.pth was not read "
                   f"by this Python, or could not pin it); {how}")
    elif ini is not None and _near(Path(ini), Path(submission)):
        refused = f"pytest read its configuration from the submission ({ini}); {how}"
    elif getattr(ns, "numprocesses", None) or getattr(ns, "dist", "no") != "no" or getattr(ns, "tx", None) \
            or getattr(ns, "looponfail", False):
        refused = ("pytest --submission grades in this one process: drop -n, --dist, --tx and -f (pytest-xdist); "
                   "attention-grader grade grades many submissions in parallel")
    else:
        return
    early_config.stash[_REFUSED] = refused


def _near(path: Path, submission: Path) -> bool:
    """Whether `path` lies in the submission (a folder) or beside it (a file: its folder is the student's)."""
    sub = submission.resolve()
    folder = sub if sub.is_dir() else sub.parent
    return path.resolve().is_relative_to(folder)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """A refusal, before any other plugin's main (pytest-xdist's --looponfail) or configure runs: one line, exit 2."""
    if _REFUSED in config.stash:
        print(f"attention-grader: {config.stash[_REFUSED]}", file=sys.stderr)
        return 2
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    if config.getoption("submission", None):
        if _REFUSED in config.stash:
            pytest.exit(config.stash[_REFUSED], returncode=2)
        config.stash[_KEY] = _State(config)


class CheckFailure(Exception):
    pass


class CheckItem(pytest.Item):
    def __init__(self, *, check_id: str, **kw):
        super().__init__(**kw)
        self.check_id = check_id

    def runtest(self):
        reply = _state(self.config).outcome(self.session, self.check_id)
        if reply["verdict"] == "skipped":
            pytest.skip(reply["text"])
        if reply["verdict"] == "failed":
            raise CheckFailure(reply["text"])

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, CheckFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"check {self.check_id}"


class SubmissionCollector(pytest.Collector):
    def collect(self):
        for cid in _state(self.config).order:
            yield CheckItem.from_parent(self, name=cid, check_id=cid)


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session):
    """Collect the rubric's checks and nothing else, from whatever folder pytest runs in."""
    state = _state(session.config)
    if state is None:
        return None
    # named after the submission, placed at the rootdir: pytest looks up conftests along a collector's path
    name = Path(session.config.getoption("submission")).resolve().name
    collector = SubmissionCollector.from_parent(session, name=name, path=session.config.rootpath, nodeid=name)
    hook = session.config.hook
    report = collector.ihook.pytest_make_collect_report(collector=collector)
    hook.pytest_collectreport(report=report)  # the terminal's "collected N items"
    items = list(report.result)
    session.testscollected = len(items)
    hook.pytest_collection_modifyitems(session=session, config=session.config, items=items)
    session.items = items
    hook.pytest_collection_finish(session=session)
    return True


def pytest_sessionfinish(session, exitstatus):
    state = _state(session.config)
    if state is None or state.summary is not None:
        return
    state.summary = state.finish(session.config.getoption("grade_json"))
    if "error" in state.summary:
        print(f"attention-grader: {state.summary['error']}", file=sys.stderr)
        session.exitstatus = 2


def pytest_unconfigure(config):
    """The grading process, told to finish, ends while pytest words the summary; reaped here, before pytest returns."""
    state = _state(config)
    if state is not None and state.summary is not None:
        state.end(finished=True)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    state = _state(config)
    if state is None or not state.summary or "error" in state.summary:
        return
    terminalreporter.section(state.summary["title"])
    for line in state.summary["lines"]:
        terminalreporter.write_line(line)
