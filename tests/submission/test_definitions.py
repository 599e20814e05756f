"""Definitions-only loading (grader/definitions.py): what is kept, what is dropped, and what the report says."""

import pytest

from grader.exercises import EXERCISES
from grader.submission.definitions import keep_definitions
from grader.submission.loader import read
from grader.submission.reading import Reading
from grader.submission.source import LoadError, Source

NAMES = EXERCISES["chapter5"].entry_points


def keep(code, filename="/tmp/homework.py"):
    return keep_definitions(Source(code, filename, "homework"))


def run(source):
    namespace = {}
    exec(compile(source.code, source.filename, "exec"), namespace)
    return namespace


def test_constants_the_function_reads_are_kept_transitively_even_after_it():
    source = keep(
        "import torch\n"
        "def attention(q, k, v):\n    return q * SCALE, q\n"
        "out, weights = attention(1, 2, 3)  # a local name of the function, not a global it reads\n"
        "BASE = 4.0\n"
        "SCALE = BASE / 2\n"
        "UNUSED = 1\n"
    )
    assert "SCALE = BASE / 2" in source.code and "BASE = 4.0" in source.code
    assert "UNUSED" not in source.code and "out, weights" not in source.code
    assert run(source)["attention"](2, 0, 0) == (4.0, 2)


def test_top_level_code_is_dropped_and_listed_with_its_line():
    source = keep(
        '"""Homework."""\n'
        "import torch\n"
        "def attention(q, k, v):\n    return q, q\n"
        "x = torch.randn(2, 3)\nprint(attention(x, x, x))\nfor step in range(10 ** 9):\n    pass\n"
        "attention = torch.compile(attention)\n"
        "if __name__ == '__main__':\n    SCALE = 2\n"
    )
    assert source.skipped == ("line 5: x = torch.randn(2, 3) (+4 more statements)",)  # up to the __main__ block
    assert source.notes[0].startswith("only definitions ran")
    assert set(run(source)) >= {"torch", "attention"}


def test_kept_code_stays_on_its_lines():
    code = "import math\nprint('hi'); X = 2\nwhile True:\n    pass\ndef attention(q, k, v):\n    return q * X, q\n"
    source = keep(code)
    lines = source.code.split("\n")
    assert lines[1] == "X = 2" and lines[4] == "def attention(q, k, v):" and len(lines) == len(code.split("\n"))


def test_aliases_and_blocks_that_bind_what_the_function_needs():
    source = keep(
        "try:\n    from einops import rearrange\nexcept ImportError:\n    rearrange = None\n"
        "import torch\n"
        "if torch.cuda.is_available():\n    DEVICE = 'cuda'\nelse:\n    DEVICE = 'cpu'\n"
        "def my_attention(q, k, v):\n    return DEVICE, rearrange\n"
        "causal_attention = my_attention\n"
        "shown = torch.zeros(2)\n"
    )
    assert run(source)["causal_attention"](0, 0, 0)[0] == "cpu"
    assert source.skipped == ("line 13: shown = torch.zeros(2)",)


def test_missing_package_is_dropped_with_a_note_and_the_rest_of_the_import_kept():
    source = keep("import torch, no_such_package_for_grading\nfrom no_such_package_for_grading.sub import x\n")
    assert source.code.split("\n")[0] == "import torch"
    assert source.skipped == ("line 2: from no_such_package_for_grading.sub import x (not installed on the grading machine)",)
    assert source.notes == ("import of 'no_such_package_for_grading' skipped: not installed on the grading machine",)


def test_a_helper_module_beside_the_file_counts_as_installed(tmp_path):
    (tmp_path / "mask_utils.py").write_text("def causal_mask(t):\n    return t\n")
    source = keep("from mask_utils import causal_mask\nfrom . import sibling\n", str(tmp_path / "main.py"))
    assert source.skipped == () and "from mask_utils import causal_mask" in source.code


def test_defs_only_for_a_py_file_through_the_loader(tmp_path):
    path = tmp_path / "homework.py"
    path.write_text("import torch\ndef attention(q, k, v):\n    return q, q\nwhile True:\n    pass\n")
    source, entry = read(path, NAMES, reading=Reading(defs_only=True))
    assert entry == "attention" and "while" not in source.code and source.skipped == ("line 4: while True:",)
    assert read(path, NAMES)[0].code == path.read_text()  # the default still runs the module as it is


def test_syntax_error_keeps_its_line(tmp_path):
    path = tmp_path / "homework.py"
    path.write_text("import torch\nfor i in range(3):\n    print(i\n")
    with pytest.raises(LoadError, match=r"syntax error in .*homework\.py, line 3"):
        read(path, NAMES, reading=Reading(defs_only=True))


def test_defs_only_reaches_the_commands(tmp_path, capsys):
    """`check --defs-only` grades the function of a script whose top level would run for ever."""
    from conftest import CH5_DIR

    from grader.frontends.cli import main

    script = tmp_path / "script.py"
    script.write_text((CH5_DIR / "correct_basic.py").read_text() + "\nwhile True:\n    pass\n")
    assert main(["check", str(script), "--defs-only"]) == 0
    assert "100/100" in capsys.readouterr().out
