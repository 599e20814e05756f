"""pytest plugin: `pytest --submission PATH` collects one item per rubric check and grades that file.

Without --submission every hook returns at once, so pytest behaves as if the plugin were not installed.
Imports of torch and the grader happen only when grading, so an ordinary pytest run pays nothing for them.
"""

from __future__ import annotations

import contextlib
import gc
import sys
from pathlib import Path

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


@contextlib.contextmanager
def _without_assert_rewriting(config):
    """pytest rewrites the asserts of every module in a plugin's distribution, hypothesis and this one included,
    and with no bytecode cache (PYTHONDONTWRITEBYTECODE, a read-only site-packages) it does so on every run.
    Grading reports through its own messages, never through a rewritten assert, so its imports skip the hook."""
    hook = config.pluginmanager.rewrite_hook
    if hook not in sys.meta_path:
        yield
        return
    at = sys.meta_path.index(hook)
    sys.meta_path.remove(hook)
    try:
        yield
    finally:
        sys.meta_path.insert(at, hook)


class _State:
    def __init__(self, config):
        from grader.frontends import options
        from grader.frontends.startup import CannotStart, start

        try:
            with _without_assert_rewriting(config):
                self.rubric = start(config.getoption("rubric"))
                from grader.grading.engine import Grading
        except CannotStart as e:
            pytest.exit(str(e), returncode=2)
        if config.getoption("device") == "cuda":
            import torch

            if not torch.cuda.is_available():
                pytest.exit("--device cuda: no CUDA device is available on this machine", returncode=2)
        self.grading = Grading(config.getoption("submission"), self.rubric, device=config.getoption("device"),
                               reading=options.reading(config.getoption))
        self.grade = None


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
        from grader.grading.outcome import Status

        outcome = _state(self.config).grading.outcome(self.check_id)
        if outcome.status in (Status.SKIPPED, Status.LATER):
            pytest.skip(outcome.message)
        if outcome.status is Status.FAILED:
            from grader.reports.text import feedback

            raise CheckFailure(feedback(outcome))

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, CheckFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"check {self.check_id}"


class SubmissionCollector(pytest.Collector):
    def collect(self):
        state = _state(self.config)
        for cid in state.rubric.order():
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
    if state is None:
        return
    from grader.reports.gradescope import write_json

    try:
        state.grading.diagnose()  # needs the worker, so before close
    finally:
        state.grading.close()
    gc.freeze()  # pytest collects garbage at unconfigure and at cleanup: what grading left need not be walked
    state.grade = grade = state.grading.summary()
    path = session.config.getoption("grade_json")
    if path:
        write_json(path, grade)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    state = _state(config)
    if state is None or state.grade is None:
        return
    from grader.reports.text import left_out, table

    terminalreporter.section(f"attention-grader: {state.grade.submission} ({state.rubric.name})")
    terminalreporter.write_line(table(state.grade))
    for line in left_out(state.grade):
        terminalreporter.write_line(line)
    for m in state.grade.mistakes():
        terminalreporter.write_line(f"Likely mistake: {m}")
