"""`pytest --submission PATH` takes no configuration file and no conftest.py: a student's folder may hold either.

pytest looks for `pytest.ini`, `pyproject.toml`, `tox.ini` or `setup.cfg` upward from every path on its command line
(a `--submission FOLDER` value among them) and applies the first one's `addopts` before any plugin loads: a
student's `-p no:attention_grader` there would switch the grader off and let the student's conftest answer for it.
No plugin hook runs early enough to stop that, so the pin is put into pytest itself: `attention_grader.pth`
(site-packages) calls `install` at every interpreter start, which patches `_pytest.config.Config.parse` as that module
is imported. Whenever the arguments a Config parses name --submission (as `--submission PATH`, `--submission=PATH`, a
prefix of it such as `--submiss`, which pytest rejects only after reading the configuration, in an `@FILE` of
arguments or in PYTEST_ADDOPTS), PIN goes in front of them: pytest then reads `/dev/null` as its configuration,
roots in the current folder, loads no conftest and keeps no cache. This holds whatever the program: the `pytest`
script, `python -m pytest`, `pytest.main([...])` from any script, and every process pytest starts that parses the
same arguments (pytest-xdist's workers). Nothing is left in the environment. A teacher's own configuration still
applies when given as `-c FILE` (the last -c wins).

The grading process (frontends.pytest_grading) is started here too: by `install` when the program is `pytest` or
`python -m pytest` and its arguments name --submission, else by that parse; its import of torch then runs beside
pytest's own start-up, and the plugin takes it (`grading_process`).

The same patch wraps pytest's console entry: a `pytest --submission` run from the `pytest` script or `python -m
pytest` then ends as `attention-grader check` ends, without the interpreter's teardown (frontends.ending);
`pytest.main()` returns as ever.

The plugin checks where it loads (`plugin.pytest_load_initial_conftests`) that a configuration file was pinned and
that it does not lie in the submission, and fails closed with exit status 2 and one line otherwise (an interpreter
started without site-packages' .pth files, `python -S`, is one way to get there).
"""

from __future__ import annotations

import os
import sys

PIN = "-c /dev/null --rootdir=. --noconftest -p no:cacheprovider"
# Plugins a grading run has no use for, which would import hypothesis (and jaxtyping, numpy) into pytest's process for
# nothing: the checks' hypothesis runs in the grading process, and no test of pytest's own is collected.
IDLE = "-p no:hypothesispytest -p no:jaxtyping"
OPTION = "--submission"
MODULE = "_pytest.config"  # where Config lives
_ADDOPTS = "PYTEST_ADDOPTS"
_MAX_ARGFILE = 1 << 20


def wanted(args, addopts: bool = True) -> bool:
    """Whether pytest's arguments (and PYTEST_ADDOPTS, which pytest puts in front of them) name --submission."""
    if _names(args, 0):
        return True
    env = os.environ.get(_ADDOPTS, "") if addopts else ""
    if "--s" not in env:
        return False
    import shlex

    try:
        return _names(shlex.split(env), 0)
    except ValueError:  # pytest will say what is wrong with it
        return True


def _names(args, depth: int) -> bool:
    for a in args:
        a = os.fspath(a) if isinstance(a, os.PathLike) else a
        if not isinstance(a, str):
            continue
        if a.startswith("@") and depth < 4 and _names(_argfile(a[1:]), depth + 1):
            return True  # argparse reads arguments from @FILE, one a line
        name = a.split("=", 1)[0]
        if len(name) >= 3 and OPTION.startswith(name):  # `--s`.. `--submission`: pytest allows no abbreviation,
            return True  # but says so only after it has read the configuration
    return False


def _argfile(path: str) -> list[str]:
    """A teacher's @FILE of arguments, one a line, as argparse reads it; a FIFO or a device is never waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return []
    with os.fdopen(fd, "rb") as f:
        import stat

        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return []
        return f.read(_MAX_ARGFILE).decode(errors="replace").splitlines()


_grading: list = []  # the grading process started for this parse, until the plugin takes it


def grading_process():
    """The grading process started as pytest started or parsed its arguments (a new one if none waits): the plugin's
    to talk to and to end."""
    if _grading:
        return _grading.pop()
    return _start_grading()


def _start_grading():
    import atexit
    import subprocess

    # -P: not the current folder first on sys.path (pytest may run inside the student's folder, beside their torch.py)
    proc = subprocess.Popen([sys.executable, "-P", "-m", "grader.frontends.pytest_grading"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, encoding="utf-8")
    atexit.register(end, proc)  # pytest ended before it asked for the finish (a refusal, --help, an error)
    return proc


def end(proc) -> None:
    """The grading process ended: killed if it still runs (it ends by itself after the finish), reaped."""
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    for f in (proc.stdin, proc.stdout):
        try:
            f.close()
        except OSError:
            pass


def _pin(parse):
    def parse_pinned(self, args, addopts: bool = True):
        if not isinstance(args, list) or not wanted(args, addopts):
            return parse(self, args, addopts)
        if not _grading:
            _grading.append(_start_grading())
        if not addopts:  # Config.fromdictargs: no PYTEST_ADDOPTS will be read, the pin goes first in the arguments
            args[:0] = f"{PIN} {IDLE}".split()
            return parse(self, args, addopts)
        before = os.environ.get(_ADDOPTS)  # in front of PYTEST_ADDOPTS too, for the teacher's -c there to win
        os.environ[_ADDOPTS] = f"{PIN} {IDLE} {before or ''}".strip()
        try:
            return parse(self, args, addopts)
        finally:
            if before is None:
                os.environ.pop(_ADDOPTS, None)
            else:
                os.environ[_ADDOPTS] = before

    parse_pinned.pinned = True
    return parse_pinned


def _ending(console_main):
    """pytest's console entry (the `pytest` script's, `python -m pytest`'s), which ends a `pytest --submission` as
    `attention-grader check` ends: without the interpreter's teardown (frontends.ending)."""
    def console_main_pinned():
        code = console_main()
        if wanted(sys.argv[1:]):
            from grader.frontends import ending

            ending.exit_now(int(code))
        return code

    console_main_pinned.pinned = True
    return console_main_pinned


def patch(module) -> None:
    """Pin `Config.parse` of this `_pytest.config` module, and wrap its console entry (once)."""
    config = module.Config
    if not getattr(config.parse, "pinned", False):
        config.parse = _pin(config.parse)
    name = "_console_main" if hasattr(module, "_console_main") else "console_main"  # pytest >= 9.1, before
    if not getattr(getattr(module, name), "pinned", False):
        setattr(module, name, _ending(getattr(module, name)))


class _Loader:
    """`_pytest.config`'s own loader, and the patch once it has run."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        self._loader.exec_module(module)
        patch(module)

    def __getattr__(self, name):
        return getattr(self._loader, name)


class Finder:
    """On sys.meta_path: finds `_pytest.config` as Python would, with `_Loader` around its loader; nothing else."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name != MODULE:
            return None
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(name, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader)
        return spec


def install() -> None:
    """What attention_grader.pth calls at interpreter start. The `pytest` program (or `python -m pytest`) grading a
    submission also starts its grading process here, before pytest itself is imported."""
    if MODULE in sys.modules:
        patch(sys.modules[MODULE])
    elif Finder not in sys.meta_path:
        sys.meta_path.insert(0, Finder)
    argv = getattr(sys, "argv", None) or [""]  # an embedding interpreter may set none
    program = os.path.basename(argv[0])
    if (program in ("pytest", "py.test") or getattr(sys, "orig_argv", [])[1:3] == ["-m", "pytest"]) and \
            not _grading and wanted(argv[1:]):
        _grading.append(_start_grading())

