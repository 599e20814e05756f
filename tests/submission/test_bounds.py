"""Reading a submission's text in the grader process is bounded (issue 29, point 4): code nested deeper than the
parser or the grader's walks go is one line (source.TooDeep, a LoadError), never a RecursionError; code that parses but
nests deeper than ast.unparse recurses still reads; the class insight leaves such a text out, with a note."""

from __future__ import annotations

import time

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from conftest import load_factor

from grader.grading import rubric
from grader.grading.engine import Grading
from grader.insight import findings
from grader.submission import definitions, policy
from grader.submission.loader import read
from grader.submission.reading import Reading
from grader.submission.source import LoadError, Source

NAMES = ("scaled_dot_product_attention",)
FUNCTION = """import torch
def scaled_dot_product_attention(q, k, v, causal=True):
    w = torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, -1)
    return w @ v, w
"""
DEEP = {"sum": "X = " + "+".join(["1"] * 3000), "minus": "X = " + "-" * 5000 + "1"}  # past the parser
MIDDLE = "+".join(["1"] * 800)  # parses, compiles and runs; ast.unparse would recurse past Python's limit


@pytest.mark.parametrize("kind", sorted(DEEP))
@pytest.mark.parametrize("defs_only", [False, True])
def test_too_deep_for_the_parser_is_one_line(tmp_path, kind, defs_only):
    sub = tmp_path / "attention.py"
    sub.write_text(FUNCTION + DEEP[kind] + "\n")
    with pytest.raises(LoadError, match="too deeply nested to read") as e:
        read(sub, NAMES, reading=Reading(defs_only=defs_only), shown="attention.py")
    assert str(e.value).startswith("too deeply nested to read: attention.py holds an expression nested thousands deep")
    assert "\n" not in str(e.value)
    assert policy.violations(sub.read_text(), ["grader"]) == []  # the policy has nothing to say: loads does


def test_a_too_deep_notebook_cell_is_left_out_and_the_function_still_reads(tmp_path):
    path = tmp_path / "nb.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell(FUNCTION), new_code_cell(DEEP["sum"])]), path)
    source, entry = read(path, NAMES)
    assert entry == NAMES[0]
    assert any(s.startswith("cell 2: X = 1+1+") and s.endswith("(too deeply nested to read; cell left out)")
               for s in source.skipped), source.skipped
    with pytest.raises(LoadError, match="too deeply nested to read"):  # every cell run: the cell is there, and cannot be read
        read(path, NAMES, reading=Reading(notebook_mode="full"))


def test_code_that_parses_but_nests_past_unparse_still_reads(tmp_path):
    """800 terms: Python runs it; the main-guard test, the policy's words and the signature's were ast.unparse."""
    sub = tmp_path / "attention.py"
    sub.write_text(f"E = {MIDDLE}\nif {MIDDLE} == 800:\n    print(E)\n" + FUNCTION
                   + f'X = __import__("grader", {MIDDLE})\ndef attention(q, k, c={MIDDLE}, *, d):\n    pass\n')
    source, entry = read(sub, NAMES, reading=Reading(defs_only=True))
    assert entry == NAMES[0] and "if 1+1+" not in source.code  # the top-level if left out, as any other
    assert policy.violations(sub.read_text(), ["grader"]) == ["line 8: ..."]
    with pytest.raises(Exception, match=r"attention\(\.\.\.\) cannot be called as attention\(q, k, v\)"):
        read(sub, ("attention",))


@pytest.mark.parametrize("guard", ['__name__ == "__main__"', "'__main__' == __name__", "(__name__ == '__main__')"])
def test_a_main_guard_is_left_out_even_where_it_binds_what_the_function_reads(guard):
    code = FUNCTION.replace("** 0.5", "** SCALE") + f"if {guard}:\n    SCALE = 0.5\n"
    kept = definitions.keep_definitions(Source(code, "a.py", "a"), NAMES)
    assert "SCALE = 0.5" not in kept.code and kept.skipped == (f"line 5: if {guard}:",)


def test_the_insight_leaves_a_too_deep_text_out_with_a_note_and_compares_the_rest(tmp_path):
    subs = {}
    for name, code in (("deep.py", DEEP["minus"]), ("a.py", FUNCTION), ("b.py", FUNCTION)):
        subs[name] = tmp_path / name
        subs[name].write_text(code + "\n")
    found = findings.examine(subs, [])
    assert found.unread == {"deep.py": "too deeply nested to read"}
    assert sorted(found.texts) == ["a.py", "b.py"]
    assert [(p.a, p.b) for p in found.pairs] == [("a.py", "b.py")]


# -- size: what a notebook's code costs to read ----------------------------------------------------------------------
def test_a_notebook_of_many_dropped_statements_reads_in_linear_time():
    """10,000 cells of one assignment each, all dropped in definitions-only mode: each was placed in its cell by
    splitting the whole source again, and worded by ast.get_source_segment, which splits it again character by
    character (minutes); the cell marks are now indexed once."""
    cells = [f"# %% cell {i}\nvalue_{i} = {i}" for i in range(2, 10_002)]
    code = "# %% cell 1\n" + FUNCTION + "\n".join(cells) + "\n"
    start = time.monotonic()
    kept = definitions.keep_definitions(Source(code, "nb.ipynb", "nb"), NAMES)
    assert time.monotonic() - start < 2 * load_factor()
    assert len(kept.skipped) == 10_000 and kept.skipped[-1] == "cell 10001: value_10001 = 10001"
    assert "value_" not in kept.code and "def scaled_dot_product_attention" in kept.code


def code_notebook(path, *codes, output: str = ""):
    cells = [new_code_cell(c, outputs=[new_output("stream", name="stdout", text=output)] if output else [])
             for c in codes]
    nbformat.write(new_notebook(cells=cells), path)
    return path


def test_a_notebooks_code_counts_against_the_source_limit_before_anything_parses_it(tmp_path, monkeypatch):
    from grader.submission import notebook

    path = code_notebook(tmp_path / "nb.ipynb", FUNCTION, "x = 1\n" * 4000)  # 24 KB of code
    monkeypatch.setattr(notebook, "_python", lambda *a: pytest.fail("a cell was parsed past the limit"))
    with pytest.raises(LoadError) as e:
        read(path, NAMES, code_kb=16, shown="nb.ipynb")
    assert str(e.value) == ("nb.ipynb: 24 KB of code in its cells (its outputs do not count), more than the 16 KB of "
                            "Python a submission may have (the rubric's limits)")


def test_a_notebooks_outputs_do_not_count_and_a_folders_code_counts_together(tmp_path):
    big = code_notebook(tmp_path / "big.ipynb", FUNCTION, output="x" * 100_000)  # 100 KB of output, little code
    assert read(big, NAMES, code_kb=16)[1] == NAMES[0]
    sub = tmp_path / "sub"
    sub.mkdir()
    code_notebook(sub / "a.ipynb", FUNCTION + "x = 1\n" * 1500)  # 9 KB + 10 KB of code
    code_notebook(sub / "b.ipynb", "y = 2\n" * 1700)
    with pytest.raises(LoadError, match=r"^sub: its Python files and notebooks' code cells come to 19 KB, more than "
                                        r"the 16 KB of Python a submission may have \(the rubric's limits\)$"):
        read(sub, NAMES, code_kb=16, shown="sub")


def test_the_rubrics_limit_is_the_one_a_notebook_is_held_to(tmp_path):
    toml = tmp_path / "small.toml"
    toml.write_text('name = "small"\nexercise = "chapter5"\n[limits]\nmax_source_kb = 16\n'
                    '[checks.loads]\npoints = 0\n[checks.output_shape]\npoints = 5\ndepends = ["loads"]\n')
    path = code_notebook(tmp_path / "nb.ipynb", FUNCTION, "x = 1\n" * 4000)
    grading = Grading(path, rubric.load(str(toml)))
    try:
        outcome = grading.outcome("loads")
    finally:
        grading.close()
    assert outcome.status == "failed" and "more than the 16 KB of Python a submission may have" in outcome.message
