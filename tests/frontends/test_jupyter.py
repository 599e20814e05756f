"""The self-check inside Jupyter, in a real kernel: nbclient runs a notebook that loads the extension, checks a
correct function, replaces it with a buggy one and checks again, and the outputs are the feedback page's HTML."""

from __future__ import annotations

import pickle
import re
import shutil
import tempfile
from pathlib import Path

import pytest

from conftest import CH5_DIR, built_once

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")


def _cells() -> list[str]:
    return [
        "%load_ext grader",
        (CH5_DIR / "correct_basic.py").read_text(),
        "%attention_check --rubric chapter5",
        (CH5_DIR / "bug_no_scaling.py").read_text(),  # the same name, defined again: the latest text counts
        "for step in range(3):\n    print('training', step)",  # not a definition: left out of the graded snapshot
        "import grader\ngrader.check('chapter5')",
        "%attention_check --rubric no_such_rubric",
    ]


@pytest.fixture(scope="module")
def run():
    """The notebook's cells once run, and the snapshot folders its kernel left behind: once per test run, since
    pytest-xdist may hand this module's tests to both pytest processes."""
    with built_once("jupyter-notebook") as (folder, fresh):
        if fresh:
            (folder / "run.pickle").write_bytes(pickle.dumps(_execute()))
    return pickle.loads((folder / "run.pickle").read_bytes())


def _execute() -> tuple[list, set[str]]:
    """Run the notebook in a kernel whose temporary folder is its own (other pytest processes run kernels and
    checks beside it), then shut the kernel down: (cells, the snapshot folders left in that folder)."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in _cells()])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    tmp = Path(tempfile.mkdtemp(prefix="kernel-tmp-"))
    tmp.chmod(0o755)  # as root, the workers run under uids of their own and make their folders in it
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("TMPDIR", str(tmp))  # the kernel's tempfile.gettempdir()
            nbclient.NotebookClient(nb, timeout=300, kernel_name="python3").execute()
        return nb.cells, {p.name for p in tmp.glob("attention-check-*")}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def executed(run):
    return run[0]


def test_the_kernel_shuts_down_clean(run):
    """ipykernel ends the kernel's children before it exits; ours must go at once, or the front end kills the
    kernel (after 5 s) before its exit hooks remove the snapshot folder."""
    assert run[1] == set()


def _html(cell) -> str:
    found = [o["data"]["text/html"] for o in cell.outputs if "data" in o and "text/html" in o["data"]]
    assert len(found) == 1, cell.outputs
    return found[0]


def _text(cell) -> str:
    return "".join(o.get("text", "") or o.get("data", {}).get("text/plain", "") for o in cell.outputs)


def test_a_correct_function_gets_full_marks_inline(executed):
    page = _html(executed[2])
    assert "attention-grader" in page and "<table>" in page
    assert "notebook.ipynb: 100/100" in page
    assert "FAIL" not in page and "<img" not in page
    assert "100/100" in _text(executed[2])  # the plain-text form, for front ends without HTML


def test_a_buggy_function_shows_the_table_counterexample_and_heatmap(executed):
    page = _html(executed[5])
    assert re.search(r"notebook\.ipynb: \d+/100", page) and "100/100" not in page
    assert "<code>sqrt_scaling</code>" in page and "FAIL" in page
    assert "Likely mistake: no scaling" in page
    assert "<img alt='your weights beside the reference&#39;s' src='data:image/png;base64," in page
    assert "training" not in page  # the loop cell did not run in the graded snapshot, only in the kernel


def test_the_style_stays_inside_the_report(executed):
    page = _html(executed[5])
    style = re.search(r"<style>(.*?)</style>", page).group(1)
    assert all(rule.startswith(".attention-grader ") for rule in style.split("}") if rule)


def test_a_bad_rubric_is_one_line_not_a_traceback(executed):
    cell = executed[6]
    assert not [o for o in cell.outputs if o["output_type"] == "error"]
    assert "no_such_rubric" in _text(cell) and len(_text(cell).strip().splitlines()) == 1
