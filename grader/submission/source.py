"""The one thing every kind of submission becomes: Python source a worker can run, and what was left out of it."""

from __future__ import annotations

import ast
import bisect
import contextlib
import functools
import warnings
from dataclasses import dataclass, field
from pathlib import Path


class LoadError(Exception):
    """The submission cannot be graded as it is; the message tells the student what to fix."""

    source: Source | None = None  # what definitions-only loading kept, where the loader got that far


class TooDeep(LoadError):
    """Code nested deeper than Python's parser, or the grader's walks of its syntax tree, can follow (`X = 1+1+...`
    with thousands of terms, thousands of unary minus signs): RecursionError or MemoryError in the grader process,
    turned into one line that costs the `loads` check."""

    def __init__(self, where: str = ""):
        super().__init__(f"too deeply nested to read: {where or 'the code'} holds an expression nested thousands "
                         "deep (such as 1 + 1 + ... with thousands of terms); compute it in steps or in a loop")
        self.where = where


@contextlib.contextmanager
def bounded(where: str = ""):
    """Work on a submission's text (parsing it, walking or unparsing its tree, its symbol table) whose recursion
    the text decides: RecursionError or MemoryError inside becomes TooDeep, never a traceback."""
    try:
        yield
    except (RecursionError, MemoryError):
        raise TooDeep(where) from None


@dataclass(frozen=True)
class Source:
    code: str  # Python source the worker runs as a module
    filename: str  # shown in tracebacks and syntax errors
    module: str  # the module name the code runs under
    folder: str | None = None  # a folder submission's directory, for its own helper modules
    skipped: tuple[str, ...] = field(default=())  # what was left out, one line each ("cell 3: plt.plot(...)")
    notes: tuple[str, ...] = field(default=())  # things the report should mention


class TooLarge(LoadError):
    """More Python than the rubric's limits let the grader parse (Budget)."""


class Budget:
    """The Python one reading of a submission may parse, in bytes: the rubric's `max_source_kb` for a .py file, a
    notebook's code cells (its outputs, which may be large, do not count) and a folder's files together. What goes
    over it is refused in one line that names the size and the limit, before anything parses it."""

    def __init__(self, kb: int, shown: str = ""):
        self.limit, self.shown = kb * 1024, shown  # shown: the submission, as the student knows it
        self.charged: dict[str, int] = {}  # a file read twice (a folder's, to find the entry point) counts once

    def charge(self, what: str, size: int, kind: str = "Python") -> None:
        """what: the file, as the student knows it; kind: what of it counts ("code in its cells" for a notebook)."""
        self.charged[what] = size
        if size > self.limit:
            raise TooLarge(f"{what}: {size_text(size)} of {kind}, more than the {size_text(self.limit)} of Python a submission "
                           "may have (the rubric's limits)")
        if (total := sum(self.charged.values())) > self.limit:
            raise TooLarge(f"{self.shown or what}: its Python files and notebooks' code cells come to {size_text(total)}, "
                            f"more than the {size_text(self.limit)} of Python a submission may have (the rubric's limits)")


def size_text(n: int) -> str:
    """Bytes as a refusal says them: "9.5 MB", "12 KB"."""
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n / 1024:.0f} KB"


CELL_MARK = "# %% cell "  # a notebook's Source.code holds each code cell after such a line (submission.notebook)


def place(source: Source, line: int, *, cell_only: bool = False) -> str:
    """A line of source.code in the student's terms: 'line 12', or in a notebook 'cell 3, line 2'. The notebook's
    cell marks are found once per source (_cells), so a caller may ask for every statement of a large notebook."""
    if source.filename.endswith(".ipynb"):
        starts, labels = _cells(source.code)
        i = bisect.bisect_right(starts, line) - 1  # the last mark at or before the line
        if i >= 0:
            cell = f"cell {labels[i]}"
            return cell if cell_only else f"{cell}, line {line - starts[i]}"
    return f"line {line}"


@functools.lru_cache(maxsize=4)
def _cells(code: str) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """The (1-based) lines of a notebook source's cell marks, in order, and each cell's label."""
    marks = [(i, text[len(CELL_MARK):].strip()) for i, text in enumerate(code.split("\n"), 1) if text.startswith(CELL_MARK)]
    return tuple(i for i, _ in marks), tuple(label for _, label in marks)


def module_name(path: Path) -> str:
    stem = path.stem if path.stem.isidentifier() else "submission"
    return stem if stem not in ("reference", "grader", "torch", "numpy") else "submission"


def tree(code: str) -> ast.Module:
    """The code's syntax tree, parsed once for the loader and the policy (a large file costs seconds a parse).
    Read it, never change it: it is shared. The student's own warnings (an invalid escape in a docstring) are
    theirs, not the grader's output. SyntaxError or ValueError (null bytes) where it is not Python; TooDeep where
    it nests deeper than the parser goes, remembered like a tree so that it costs one parse too."""
    found = _tree(code)
    if found is None:
        raise TooDeep()
    return found


@functools.lru_cache(maxsize=2)
def _tree(code: str) -> ast.Module | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            return ast.parse(code)
        except (RecursionError, MemoryError):
            return None


def unparsed(node: ast.AST) -> str:
    """ast.unparse for a message or a comparison: its recursion is Python's, so an expression a few hundred deep,
    which parses and runs, would raise RecursionError; '...' then."""
    try:
        return ast.unparse(node)
    except (RecursionError, MemoryError):
        return "..."


ANY_MODULE = "*"  # in an exercise's entry points: the one nn.Module subclass of the file, whatever its name


def bindings(found: ast.Module) -> dict[str, ast.AST]:
    """Names bound at module level by def, class, assignment and import: the last statement binding each."""
    names: dict[str, ast.AST] = {}
    for node in found.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name):
                    names[target.id] = node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names[(alias.asname or alias.name).split(".")[0]] = node
    return names


def entry_name(bound: dict[str, ast.AST], names: tuple[str, ...]) -> str | None:
    """Which of the accepted entry-point names the module's top level binds (the first), or failing them, where
    `names` holds ANY_MODULE, the one nn.Module class with a forward; None where neither settles it."""
    for name in names:
        if name in bound:
            return name
    if ANY_MODULE in names:
        layers = [n for n, node in bound.items() if isinstance(node, ast.ClassDef) and _is_layer(node)]
        if len(layers) == 1:
            return layers[0]
    return None


def _is_layer(node: ast.ClassDef) -> bool:
    """A class whose base is named Module (nn.Module, torch.nn.Module) and that defines forward."""
    based = any((isinstance(b, ast.Attribute) and b.attr == "Module") or (isinstance(b, ast.Name) and b.id == "Module")
                for b in node.bases)
    return based and any(isinstance(f, ast.FunctionDef) and f.name == "forward" for f in node.body)


def parse(source: Source) -> ast.Module:
    try:
        return tree(source.code)
    except TooDeep:
        raise TooDeep(source.filename) from None
    except SyntaxError as e:
        where = f"{source.filename}, {place(source, e.lineno)}" if e.lineno else source.filename
        raise LoadError(f"syntax error in {where}: {e.msg}" + (f"\n    {e.text.rstrip()}" if e.text else "")) from None
