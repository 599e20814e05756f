"""Notebook submissions: the Python a worker runs from an .ipynb, without a Jupyter kernel.

The notebook is read with nbformat and validated. Its code cells are joined in order, each after a `# %% cell N`
line (N counts every cell from the top, markdown included, as the student sees them), so that an error maps back
to its cell (source.place). IPython syntax needs a kernel: magics, `!` shell escapes and `?` help become `pass` and
are listed as not run (the body of a `%%time`, `%%timeit` or `%%capture` cell is plain Python and stays).
IPython's own input transformer finds them when IPython is installed; otherwise a line-based fallback does.
Mode "defs" then keeps only what defines things (submission.definitions), and a cell that does not parse is left out
and listed; mode "full" runs every cell, under the rubric's load time limit like any file.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
import warnings
from pathlib import Path

import nbformat

from grader.submission import definitions
from grader.submission.source import CELL_MARK, Budget, LoadError, Source, bounded, module_name
from grader.submission.staging import Caps

MODES = ("defs", "full")
_PYTHON_BODY = re.compile(r"\s*%%(time|timeit|capture)\b")
_TRANSFORMED = re.compile(r"(\s*)(?:[^=]*=\s*)?get_ipython\(\)\.\w+\(")  # what IPython's transformer writes
_FALLBACK = re.compile(r"(\s*)(?:[%!]|[\w.,\s]+=\s*[%!]|\?{1,2}[\w.*]+\s*$|[\w.*]+\?{1,2}\s*$)")  # magic, shell, help


def source(path: Path, mode: str, shown: str | None = None, names: tuple[str, ...] = (),
           budget: Budget | None = None) -> Source:
    """shown: the name messages give the notebook (the student's path of the copy at `path`); names: the accepted
    entry points, whose reach decides which values mode "defs" keeps (definitions.keep_definitions); budget: the
    Python the reading may parse (the rubric's max_source_kb; its default otherwise), which the code cells count
    against."""
    if mode not in MODES:
        raise LoadError(f"notebook mode {mode!r}: expected one of {', '.join(MODES)}")
    parts, skipped = [], []
    shown = shown or str(path)
    cells = _read(path, shown, budget or Budget(Caps().source_kb)).cells
    with bounded(shown):  # the transformer's and the parser's work on a cell: TooDeep, never a traceback
        for number, cell in enumerate(cells, 1):
            if cell.cell_type != "code":
                continue
            code, ipython = _python(cell.source.replace("\r\n", "\n").replace("\r", "\n"))
            skipped += [f"cell {number}: {_short(line)} (IPython syntax: needs a Jupyter kernel)" for line in ipython]
            if mode == "defs" and (error := _syntax_error(code)):
                skipped.append(f"cell {number}: {_short(cell.source)} ({error}; cell left out)")
                code = ""
            parts.append(f"{CELL_MARK}{number}\n{code}")
    notebook = Source("\n".join(parts) + "\n", shown, module_name(path), skipped=tuple(skipped))
    if mode == "full":
        return notebook
    kept = definitions.keep_definitions(notebook, names)
    in_cell_order = sorted(kept.skipped, key=lambda entry: int(entry.split(":")[0].removeprefix("cell ")))  # stable
    return dataclasses.replace(kept, skipped=tuple(in_cell_order))


def _read(path: Path, shown: str, budget: Budget) -> nbformat.NotebookNode:
    """The validated notebook, or a one-line LoadError that names the file (as `shown`) and says what is wrong; its
    code cells charged to the budget before any is validated or parsed."""
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text)
    except OSError as e:
        raise LoadError(f"{shown}: cannot read it: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise LoadError(f"{shown}: not a notebook: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise LoadError(f"{shown}: not a notebook: invalid JSON ({e.msg} at line {e.lineno}, column {e.colno})") from None
    if not (isinstance(data, dict) and "nbformat" in data):
        raise LoadError(f"{shown}: not a notebook: JSON without the 'nbformat' and 'cells' of a Jupyter notebook")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # nbformat's warnings about old minor versions are not the student's
            nb = nbformat.reads(text, as_version=4)
            budget.charge(shown, _code_size(nb), "code in its cells (its outputs do not count)")
            nbformat.validate(nb)
    except nbformat.ValidationError as e:
        at = list(e.absolute_path)
        cell = f" (cell {at[1] + 1})" if at[:1] == ["cells"] and len(at) > 1 else ""
        raise LoadError(f"{shown}: not a valid notebook{cell}: {_short(e.message, 200)}") from None
    except (ValueError, KeyError, TypeError, AttributeError) as e:  # nbformat's converters on malformed JSON
        raise LoadError(f"{shown}: not a valid notebook: {_short(f'{type(e).__name__}: {e}', 200)}") from None
    meta = nb.metadata
    language = meta.get("kernelspec", {}).get("language") or meta.get("language_info", {}).get("name") or "python"
    if not language.lower().startswith("python"):
        raise LoadError(f"{shown}: a {language} notebook: only Python notebooks can be graded")
    return nb


def _code_size(nb: nbformat.NotebookNode) -> int:
    """Bytes of the code cells' text (not yet validated: a source that is not text counts as its repr)."""
    cells = nb.get("cells")
    code = [c.get("source", "") for c in (cells if isinstance(cells, list) else []) if isinstance(c, dict) and c.get("cell_type") == "code"]
    return sum(len((s if isinstance(s, str) else repr(s)).encode()) for s in code)


def _python(text: str) -> tuple[str, list[str]]:
    """The cell as Python with each line of IPython syntax turned into `pass`, and those lines as written."""
    lines = text.split("\n")
    found = []
    if _PYTHON_BODY.match(lines[0]):
        found, lines = [lines[0]], ["pass"] + lines[1:]
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:
        return _fallback(lines, found)
    python = TransformerManager().transform_cell("\n".join(lines)).split("\n")
    for i, line in enumerate(python):
        match = _TRANSFORMED.match(line)
        if match and (i >= len(lines) or line != lines[i]):  # the student's own get_ipython() calls stay
            found.append(lines[i] if i < len(lines) else line)  # a cell magic is one line: lines[0] is its %%
            python[i] = match.group(1) + "pass"
    return "\n".join(python), found


def _fallback(lines: list[str], found: list[str]) -> tuple[str, list[str]]:
    """Without IPython: a cell that parses has no IPython syntax; in one that does not, drop the lines that look
    like a magic, a shell escape or help (a `%%` first line takes the whole cell)."""
    if not _syntax_error("\n".join(lines)):
        return "\n".join(lines), found
    if lines[0].lstrip().startswith("%%"):
        return "pass" + "\n" * (len(lines) - 1), found + [lines[0]]
    python = []
    for line in lines:
        match = _FALLBACK.match(line)
        python.append(match.group(1) + "pass" if match else line)
        found += [line] if match else []
    return "\n".join(python), found


def _syntax_error(code: str) -> str:
    try:
        ast.parse(code)
    except SyntaxError as e:
        return f"syntax error in line {e.lineno}: {e.msg}"
    except ValueError as e:  # null bytes
        return f"not Python: {e}"
    except (RecursionError, MemoryError):
        return "too deeply nested to read"
    return ""


def _short(text: str, limit: int = 80) -> str:
    text = text.strip().split("\n")[0]
    return text if len(text) <= limit else text[: limit - 3] + "..."
