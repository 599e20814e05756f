"""Notebook submissions: the function is graded, the experiments around it are not run (grader/notebook.py)."""

import json
import re
import sys
import time

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from conftest import ROOT, load_factor

from grader.exercises import EXERCISES
from grader.grading import rubric
from grader.grading.engine import Grading
from grader.submission.loader import read
from grader.submission.reading import Reading
from grader.submission.source import LoadError

NAMES = EXERCISES["chapter5"].entry_points

FUNCTION = """\
def scaled_dot_product_attention(q, k, v, causal=True):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if causal:
        future = torch.ones(scores.shape[-2:], dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(future, NEG)
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights"""


def notebook(folder, *cells, name="nb.ipynb"):
    """A notebook file; a cell given as ("markdown", text) is a markdown cell, a string a code cell."""
    nb = new_notebook(cells=[new_markdown_cell(c[1]) if isinstance(c, tuple) else new_code_cell(c) for c in cells])
    path = folder / name
    nbformat.write(nb, path)
    return path


def student_notebook(folder, name="nb.ipynb"):
    """What students hand in: the function among the chapter's experiments."""
    return notebook(
        folder,
        ("markdown", "# Chapter 5"),  # cell 1
        "%matplotlib inline\n!pip install einops",  # cell 2
        "import math\nimport torch\nimport no_such_package_for_grading as wandb",  # cell 3
        FUNCTION,  # cell 4
        "q = k = v = torch.randn(1, 4, 8)\nout, weights = scaled_dot_product_attention(q, k, v)\nweights?",  # cell 5
        "wandb.init()\nwhile True:  # the training loop, stopped by hand\n    pass",  # cell 6
        "plot_heatmaps(weights_without_mask, weights)  # defined in a cell that was deleted",  # cell 7
        "NEG = float('-inf')",  # cell 8: after the function that uses it
        name=name,
    )


@pytest.fixture(params=["ipython", "fallback"])
def transformer(request, monkeypatch):
    """Both ways of turning IPython syntax into Python: IPython's transformer (when installed) and the fallback."""
    if request.param == "ipython":
        pytest.importorskip("IPython.core.inputtransformer2")
    else:
        monkeypatch.setitem(sys.modules, "IPython.core.inputtransformer2", None)  # import fails as if not installed
    return request.param


def loads(path, rubric_name="chapter5", check="loads", **kw):
    grading = Grading(path, rubric.load(str(rubric_name)), reading=Reading(**kw))
    try:
        return grading.outcome(check), grading
    finally:
        grading.close()


# -- definitions only, without a kernel ---------------------------------------------------------------------------
def test_ipython_syntax_is_not_run_and_is_listed(tmp_path, transformer):
    path = notebook(
        tmp_path,
        "%matplotlib inline\n!pip install einops\nfiles = !ls\n?torch.softmax\ntorch.softmax??",
        "%%bash\necho this is not python",
        "%%time\nimport math\nimport torch\n" + FUNCTION.replace("NEG", "float('-inf')"),  # the body is Python
        "for i in range(3):\n    %time torch.ones(i)\n    !echo $i",
    )
    source, entry = read(path, NAMES)
    assert entry == "scaled_dot_product_attention"
    compile(source.code, source.filename, "exec")
    assert "get_ipython" not in source.code and "pip" not in source.code and "echo" not in source.code
    listed = "\n".join(source.skipped)
    for line in ["cell 1: %matplotlib inline", "cell 1: !pip install einops", "cell 1: files = !ls", "cell 1: ?torch.softmax",
                 "cell 1: torch.softmax??", "cell 2: %%bash", "cell 3: %%time", "cell 4: for i in range(3):"]:
        assert line in listed


def test_full_mode_runs_python_cells_but_not_ipython_syntax(tmp_path, transformer):
    path = notebook(tmp_path, "%matplotlib inline\nimport math, torch\nNEG = float('-inf')", FUNCTION, "print('ran')")
    outcome, grading = loads(path, notebook_mode="full")
    assert outcome.status == "passed", outcome.message
    assert grading.subject.output() == "ran\n"
    assert grading.source.skipped == ("cell 1: %matplotlib inline (IPython syntax: needs a Jupyter kernel)",)


def test_a_student_notebook_loads_in_seconds_without_its_experiments(tmp_path):
    start = time.monotonic()
    outcome, grading = loads(student_notebook(tmp_path), check="output_shape")
    assert outcome.status == "passed", outcome.message
    assert time.monotonic() - start < 10 * load_factor()
    assert "cell 6: wandb.init() (+1 more statement)" in grading.source.skipped  # the endless loop, not run
    assert "cell 7: plot_heatmaps(weights_without_mask, weights)" in grading.source.skipped  # undefined names
    assert "cell 5: q = k = v = torch.randn(1, 4, 8) (+1 more statement)" in grading.source.skipped
    assert "NEG = float('-inf')" in grading.source.code  # the constant after the function is kept


def test_missing_package_is_tolerated_and_named(tmp_path):
    source, _ = read(student_notebook(tmp_path), NAMES)
    assert "cell 3: import no_such_package_for_grading as wandb (not installed on the grading machine)" in source.skipped
    assert "import of 'no_such_package_for_grading' skipped: not installed on the grading machine" in source.notes
    assert "no_such_package" not in source.code and "import torch" in source.code


def test_missing_package_the_function_needs_fails_and_the_report_says_why(tmp_path):
    path = notebook(tmp_path, "import torch\nimport no_such_package_for_grading as nsp",
                    "def attention(q, k, v, causal=True):\n    return nsp.attention(q, k, v)")
    outcome, grading = loads(path, check="output_shape")
    assert outcome.status == "failed"
    assert "NameError: name 'nsp' is not defined" in outcome.message
    assert "cell 2, line 2 in attention" in outcome.message
    summary = grading.summary()
    assert "import of 'no_such_package_for_grading' skipped: not installed on the grading machine" in summary.notes


def test_a_function_that_needs_skipped_code_sees_the_list(tmp_path):
    path = notebook(tmp_path, "for H in [8]:\n    pass", "def attention(q, k, v):\n    return q / H, q")
    outcome, grading = loads(path, check="output_shape")
    assert "NameError: name 'H' is not defined" in outcome.message
    assert grading.summary().skipped_code == ["cell 1: for H in [8]:"]


def test_cell_with_a_syntax_error_is_left_out_in_defs_mode(tmp_path):
    path = notebook(tmp_path, "import torch", "def attention(q, k, v)\n    return q, q", "plt.plot(")
    with pytest.raises(LoadError, match="no function named") as e:
        read(path, NAMES)
    assert "cell 2: def attention(q, k, v) (syntax error in line 1: expected ':'; cell left out)" in e.value.source.skipped
    outcome, grading = loads(path)
    assert outcome.status == "failed" and "cell 2: def attention(q, k, v)" in grading.summary().skipped_code[0]


# -- --notebook-mode full ---------------------------------------------------------------------------------------
def test_full_mode_reports_the_failing_cell(tmp_path):
    path = notebook(tmp_path, ("markdown", "intro"), "import math\nimport torch\nNEG = float('-inf')", FUNCTION,
                    "x = torch.randn(1, 2, 4)\nplot_heatmaps(x)")
    outcome, _ = loads(path, notebook_mode="full")
    assert outcome.status == "failed"
    assert "NameError: name 'plot_heatmaps' is not defined" in outcome.message
    assert "at cell 4, line 2 in <module>: plot_heatmaps(x)" in outcome.message
    assert loads(path)[0].status == "passed"  # the default mode does not run that cell


def test_full_mode_syntax_error_names_the_cell(tmp_path):
    path = notebook(tmp_path, "import torch", FUNCTION, "plt.plot(")
    with pytest.raises(LoadError, match=r"syntax error in .*nb\.ipynb, cell 3, line 1"):
        read(path, NAMES, reading=Reading(notebook_mode="full"))


def test_full_mode_endless_loop_times_out_defs_mode_does_not_run_it(tmp_path):
    text = (ROOT / "rubrics" / "chapter5.toml").read_text()
    fast = tmp_path / "fast.toml"
    fast.write_text(re.sub(r"(?m)^load_timeout = [\d.]+", "load_timeout = 1", text))
    assert rubric.load(str(fast)).limits.load_timeout == 1
    path = notebook(tmp_path, "import math\nimport torch\nNEG = float('-inf')", FUNCTION, "while True:  # training\n    pass")
    start = time.monotonic()
    outcome, _ = loads(path, fast, notebook_mode="full")
    assert outcome.status == "failed" and "timed out after 1 s while loading" in outcome.message
    assert time.monotonic() - start < 8 * load_factor()
    assert loads(path, fast)[0].status == "passed"


# -- what is not a notebook -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, message",
    [
        ('{"nbformat": 4, "cells": [', r"bad\.ipynb: not a notebook: invalid JSON \(Expecting value at line 1, column 27\)"),
        ("hello", r"bad\.ipynb: not a notebook: invalid JSON"),
        ('{"name": "x", "version": 1}', r"bad\.ipynb: not a notebook: JSON without the 'nbformat'"),
        ("[1, 2]", r"bad\.ipynb: not a notebook: JSON without"),
        (('{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [{"cell_type": "code", "sorce": "x", "metadata": {}, '
          '"outputs": [], "execution_count": null, "id": "a"}]}'), r"bad\.ipynb: not a valid notebook \(cell 1\): .*'sorce'"),
        (('{"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {"name": "ir", "language": "R", '
          '"display_name": "R"}}, "cells": []}'), r"bad\.ipynb: a R notebook: only Python notebooks"),
    ],
)
def test_not_a_notebook_is_one_clear_line(tmp_path, text, message):
    (tmp_path / "bad.ipynb").write_text(text)
    with pytest.raises(LoadError, match=message) as e:
        read(tmp_path / "bad.ipynb", NAMES)
    assert "\n" not in str(e.value)


def test_corrupt_notebook_fails_loads_not_the_grader(tmp_path):
    (tmp_path / "bad.ipynb").write_bytes(b'\xff\xfe{"cells"')
    outcome, _ = loads(tmp_path / "bad.ipynb")
    assert outcome.status == "failed" and "bad.ipynb: not a notebook: not UTF-8 text" in outcome.message


def test_folder_holding_a_notebook(tmp_path):
    (tmp_path / "hw").mkdir()
    (tmp_path / "hw" / "notes.md").write_text("my notes")
    path = student_notebook(tmp_path / "hw", name="attention.ipynb")
    source, entry = read(tmp_path / "hw", NAMES)
    assert source.filename == str(path) and source.folder == str(tmp_path / "hw")
    assert entry == "scaled_dot_product_attention" and source.skipped


def test_same_notebook_same_source(tmp_path):
    path = student_notebook(tmp_path)
    assert read(path, NAMES) == read(path, NAMES)


# -- the plugin -------------------------------------------------------------------------------------------------
def test_plugin_grades_a_notebook_and_lists_what_it_did_not_run(pytester, tmp_path):
    path = student_notebook(tmp_path)
    result = pytester.runpytest_subprocess("--submission", str(path), "--grade-json", "r.json")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines([
        "Total: 100/100",
        "Not run from your file:",
        "  cell 2: %matplotlib inline (IPython syntax: needs a Jupyter kernel)",
        "  cell 6: wandb.init() (+1 more statement)",
        "Note: import of 'no_such_package_for_grading' skipped: not installed on the grading machine",
    ])
    output = json.loads((pytester.path / "r.json").read_text())["output"]
    assert "cell 7: plot_heatmaps(weights_without_mask, weights)" in output


def test_plugin_defs_only_for_a_py_file(pytester, tmp_path):
    script = tmp_path / "homework.py"
    script.write_text("import math\nimport torch\n\n" + FUNCTION + "\n\nwhile True:\n    pass\nNEG = float('-inf')\n")
    result = pytester.runpytest_subprocess("--submission", str(script), "--defs-only", "-k", "loads or output_shape")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["  line 12: while True:", "*2 passed*"])
