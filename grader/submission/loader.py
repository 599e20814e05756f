"""From a path a student handed in to Python source and the name of its entry point, without running it.

A submission is a `.py` file, a notebook, or a folder holding one. Each kind only has to produce a `Source`;
everything after that (finding the entry point, the worker, the checks) is the same for all of them.
"""

from __future__ import annotations

import ast
import difflib
from pathlib import Path

from grader.submission import definitions
from grader.submission.reading import Reading
from grader.submission.source import (
    ANY_MODULE,
    Budget,
    LoadError,
    Source,
    TooLarge,
    bindings,
    entry_name,
    module_name,
    parse,
    place,
    tree,
    unparsed,
)
from grader.submission.staging import Caps


def _candidates(folder: Path) -> list[Path]:
    files = [p for p in sorted(folder.rglob("*")) if p.suffix in (".py", ".ipynb") and p.is_file()]
    return [p for p in files if not any(part.startswith((".", "__")) for part in p.relative_to(folder).parts)]


def read(path: str | Path, names: tuple[str, ...], inputs: tuple[str, ...] = ("q", "k", "v"),
         reading: Reading = Reading(), shown: str | Path | None = None,
         others: tuple[str, ...] = (), code_kb: int | None = None) -> tuple[Source, str]:
    """The submission's source and the name of its entry point, which must take the exercise's positional `inputs`;
    LoadError with an actionable message. `path` is what is read (the staged copy); `shown`, the path the student
    knows it by, is what messages and tracebacks name (by default `path` itself). `others`: the entry points of the
    rubric's other parts (CS336's sibling adapters), which say where a missing one belongs in a folder and are
    never offered as its misspelling. `code_kb`: the Python it may parse (the rubric's max_source_kb, by default
    its default): a .py file, a notebook's code cells and a folder's files together (source.Budget)."""
    path = Path(path)
    name = _Names(path, Path(shown) if shown is not None else path)
    budget = Budget(code_kb or Caps().source_kb, name(path))
    if not path.exists():
        raise LoadError(f"{name(path)}: no such file or folder")
    if path.is_dir():
        found = _candidates(path)
        if not found:
            raise LoadError(f"{name(path)}: the folder holds no .py or .ipynb file")
        bound = {p: _bound(p, names, name, budget) for p in found}
        defining = [p for p, b in bound.items() if b is not None and entry_name(b, names) is not None]
        chosen = defining[0] if defining else _belongs(path, found, bound, names, others, name)  # several: the first
        source = _read_file(chosen, reading, name, names, budget)
        source = Source(source.code, source.filename, source.module, str(path), source.skipped, source.notes)
    else:
        source = _read_file(path, reading, name, names, budget)
    try:
        return source, find_entry(source, names, inputs, others)
    except LoadError as e:
        e.source = source  # the report can still list what definitions-only loading left out
        raise


class _Names:
    """A file of the copy by the name the student knows it."""

    def __init__(self, copy: Path, shown: Path):
        self.copy, self.shown = copy, shown

    def __call__(self, p: Path) -> str:
        return str(self.shown / p.relative_to(self.copy)) if p != self.copy else str(self.shown)


def _bound(path: Path, names: tuple[str, ...], name: _Names, budget: Budget) -> dict[str, ast.AST] | None:
    """What a file of a folder binds at its top level; None where it cannot be read or parsed."""
    try:
        return bindings(tree(_read_file(path, Reading(), name, names, budget).code))
    except TooLarge:  # over the budget: said as such, not as a file that cannot be parsed
        raise
    except (LoadError, SyntaxError, ValueError):
        return None


def _belongs(folder: Path, found: list[Path], bound: dict, names: tuple[str, ...], others: tuple[str, ...],
             name: _Names) -> Path:
    """The file of a folder where entry points `names` that no file defines belong, to be named in the error: the
    one with the rubric's other entry points (CS336's tests/adapters.py), else one with a function of a close name
    (a misspelling), else one that cannot be parsed (it may hold them); LoadError when none of them is."""
    for fits in (lambda p: bound[p] is not None and any(n in bound[p] for n in others),
                 lambda p: bound[p] is not None and _misspelt(_functions(bound[p], others), names) is not None,
                 lambda p: bound[p] is None):
        fitting = [p for p in found if fits(p)]
        if fitting:
            return fitting[0]
    listed = ", ".join(n for n in names if n != ANY_MODULE) or "an nn.Module class with a forward"
    looked = [str(p.relative_to(folder)) for p in found]
    more = f" and {len(looked) - 12} more" if len(looked) > 12 else ""
    raise LoadError(f"{name(folder)}: no file of the folder defines {listed} (looked at: {', '.join(looked[:12])}{more})")


def _read_file(path: Path, reading: Reading, name: _Names, names: tuple[str, ...], budget: Budget) -> Source:
    """names: the accepted entry points; read definitions-only, the file keeps the values what grading reaches
    from the one it binds uses (definitions.keep_definitions). budget: what it may parse, charged before it is."""
    shown = name(path)
    if path.suffix == ".ipynb":
        from grader.submission import notebook  # nbformat's import, only for notebooks

        return notebook.source(path, reading.notebook_mode, shown, names, budget)
    if path.suffix != ".py":
        raise LoadError(f"{shown}: not a .py file, a notebook or a folder")
    budget.charge(shown, path.stat().st_size)
    try:
        code = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise LoadError(f"{shown}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    source = Source(code, shown, module_name(path))
    if reading.defs_only:
        source = definitions.keep_definitions(source, names)
    return source


def top_level_names(code: str) -> dict[str, ast.AST]:
    """Names bound at module level: def, class, assignment and import."""
    try:
        found = tree(code)
    except (SyntaxError, ValueError):
        return {}
    return bindings(found)


def find_entry(source: Source, names: tuple[str, ...], inputs: tuple[str, ...] = ("q", "k", "v"),
               others: tuple[str, ...] = ()) -> str:
    """The first accepted entry-point name the source defines, after checking that it can take the `inputs`.
    others: the rubric's other entry points, never suggested as a misspelling of these."""
    bound = bindings(parse(source))
    found = entry_name(bound, names)
    if found is not None:
        node = bound[found]
        if isinstance(node, ast.FunctionDef):
            _check_signature(node, source, inputs)
        return found
    names = tuple(n for n in names if n != ANY_MODULE) or names
    functions = _functions(bound)
    close = _misspelt(_functions(bound, others), names)
    hint = f" Did you mean to name {close!r} {_nearest(close, names)!r}?" if close else ""
    listed = ", ".join(names)
    have = f" (the file defines: {', '.join(functions)})" if functions else " (the file defines no function)"
    raise LoadError(f"{source.filename}: no function named {listed}{have}.{hint}")


def _functions(bound: dict[str, ast.AST], others: tuple[str, ...] = ()) -> list[str]:
    """The functions a module defines at its top level, but for `others` (the rubric's other entry points)."""
    return [n for n, node in bound.items() if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and n not in others]


def _misspelt(functions: list[str], names: tuple[str, ...]) -> str | None:
    """The function that looks like a misspelling of an accepted name (the first name's more loosely), if one does."""
    names = tuple(n for n in names if n != ANY_MODULE)
    if not names:
        return None
    close = difflib.get_close_matches(names[0], functions, n=1, cutoff=0.6) or [
        m for name in names[1:] for m in difflib.get_close_matches(name, functions, n=1, cutoff=0.75)
    ]
    return close[0] if close else None


def _nearest(name: str, names: tuple[str, ...]) -> str:
    return max(names, key=lambda n: difflib.SequenceMatcher(None, name, n).ratio())


_COUNT = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}


def _check_signature(node: ast.FunctionDef, source: Source, inputs: tuple[str, ...]) -> None:
    a = node.args
    n = len(inputs)
    positional = len(a.posonlyargs) + len(a.args)
    required_kwonly = [k.arg for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is None]
    required = positional - len(a.defaults)
    if (positional < n and a.vararg is None) or required > n or required_kwonly:
        params, listed = unparsed(a), ", ".join(inputs)
        raise LoadError(
            f"{source.filename}, {place(source, node.lineno)}: {node.name}({params}) cannot be called as "
            f"{node.name}({listed}): it must take {listed} as its first {_COUNT.get(n, n)} arguments, the others optional"
        )
