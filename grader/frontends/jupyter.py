"""The self-check inside Jupyter: `%load_ext grader`, then `%attention_check [--rubric NAME]` or `grader.check()`.

It grades the notebook as it stands: the cells run so far (the kernel's input history, in the order they ran,
so a cell run again counts with its latest text), written out as a notebook and loaded the same
definitions-only way as a notebook file, in the same sandboxed worker. The kernel's own objects are never used:
what a cell defined but a later cell replaced, or what exists only because a training loop ran, is not graded.
The result shows as the HTML of feedback.html (table, counterexample, heatmap), and as the terminal's text
where no browser front end renders HTML. Needs IPython: `pip install attention-grader[jupyter]`.
"""

from __future__ import annotations

import argparse
import atexit
import re
import shlex
import shutil
import tempfile
from pathlib import Path

SCOPE = "attention-grader"  # the class the inline HTML's style is limited to
_folder: list[Path] = []  # one snapshot folder per kernel, so that the replay lines stay valid while it runs


class Report:
    """One grade, shown by IPython's display machinery: HTML in a notebook, text in a terminal."""

    def __init__(self, grade, status: int):
        self.grade = grade
        self.status = status  # what `attention-grader check` would exit with: 0 when every visible check passed

    def _repr_html_(self) -> str:
        from grader.reports.feedback_page import fragment, rendered

        return fragment(self.grade, *rendered(self.grade), scope=SCOPE)

    def __repr__(self) -> str:
        from grader.frontends.check import Style, render

        return render(self.grade, Style(False))


class UsageError(Exception):
    """One line for the student."""


# The check's own lines: `import grader` would also cost the policy check (submissions may not import the grader).
_OWN = re.compile(r"^(?:import grader\s*|from grader import [\w, ]+|grader\.check\(.*\)\s*|%load_ext grader\s*|%attention_check\b.*)$")


def cells_run(ipython) -> list[str]:
    """The kernel's inputs in the order they ran (IPython's raw history), one cell each so that "cell N" in the
    report is In [N]; the lines that only load or call the check are left out."""
    history = ipython.history_manager.input_hist_raw[1:]  # entry 0 is always empty
    return ["\n".join(line for line in cell.splitlines() if not _OWN.match(line)) for cell in history]


def snapshot(cells: list[str], name: str = "notebook.ipynb") -> Path:
    """The cells as a notebook file in this kernel's snapshot folder (replaced on every check)."""
    import nbformat

    if not _folder:
        _folder.append(Path(tempfile.mkdtemp(prefix="attention-check-")))
        atexit.register(shutil.rmtree, _folder[0], True)
    path = _folder[0] / name
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbformat.write(nb, str(path))
    return path


def _notebook_name(ipython) -> str:
    """The notebook's own file name where the front end tells the kernel (`__session__`), else notebook.ipynb."""
    session = str(ipython.user_ns.get("__session__") or "")
    return Path(session).name if session.endswith(".ipynb") else "notebook.ipynb"


def check(rubric: str | None = None, ipython=None) -> Report:
    """Grade the cells run so far with `rubric` (default: the grader's default rubric) and return the report."""
    from grader.frontends import options

    if ipython is None:
        from IPython import get_ipython

        ipython = get_ipython()
    if ipython is None:
        raise UsageError("grader.check() runs inside Jupyter or IPython; elsewhere use `attention-grader check FILE`")
    from grader.frontends.check import exit_status
    from grader.frontends.startup import CannotStart, start

    try:
        loaded = start(rubric or options.DEFAULT_RUBRIC)
    except CannotStart as e:
        raise UsageError(str(e)) from None
    from grader.grading.engine import Grading
    from grader.submission.reading import Reading

    path = snapshot(cells_run(ipython), _notebook_name(ipython))
    grade = Grading(path, loaded, reading=Reading(notebook_mode="defs")).finish()
    return Report(grade, exit_status(grade))


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(f"%attention_check: {message}")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="%attention_check", add_help=False)
    from grader.frontends import options

    options.add_rubric(p.add_argument)
    return p


def attention_check(line: str = ""):
    """%attention_check [--rubric NAME|FILE]: grade the notebook's cells run so far."""
    from IPython import get_ipython

    try:
        args = _parser().parse_args(shlex.split(line))
        return check(args.rubric, get_ipython())
    except UsageError as e:
        print(e)  # one line in the cell's output, not a traceback
        return None


def load(ipython) -> None:
    """What `%load_ext grader` does (grader.load_ipython_extension)."""
    ipython.register_magic_function(attention_check, magic_kind="line", magic_name="attention_check")
    kernel = getattr(ipython, "kernel", None)  # ipykernel's; a terminal IPython has none and runs atexit
    if kernel is not None and not getattr(kernel.do_shutdown, "_grader", False):
        kernel.do_shutdown = _first_ours(kernel.do_shutdown)


def _first_ours(do_shutdown):
    """On shutdown ipykernel SIGTERMs the kernel's children for up to 14 s before it exits, and the front end kills
    the kernel after 5: multiprocessing's resource tracker ignores SIGTERM, so the kernel was killed before its
    atexit hooks ran and its snapshot folder stayed behind. The fork server, the tracker and the folder go first."""
    def shutdown(restart):
        from grader.sandbox import spawn

        spawn.stop_server()  # and the tracker started with it
        for folder in _folder:
            shutil.rmtree(folder, ignore_errors=True)
        return do_shutdown(restart)  # ipykernel awaits it if it is a coroutine

    shutdown._grader = True
    return shutdown
