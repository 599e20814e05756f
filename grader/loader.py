"""From a path a student handed in to Python source and the name of its entry point, without running it.

A submission is a `.py` file, a notebook, or a folder holding one. Each kind only has to produce a `Source`;
everything after that (finding the entry point, the worker, the checks) is the same for all of them.
"""

from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass, field
from pathlib import Path


class LoadError(Exception):
    """The submission cannot be graded as it is; the message tells the student what to fix."""


@dataclass(frozen=True)
class Source:
    code: str  # Python source the worker runs as a module
    filename: str  # shown in tracebacks and syntax errors
    module: str  # the module name the code runs under
    folder: str | None = None  # a folder submission's directory, for its own helper modules
    skipped: tuple[str, ...] = field(default=())  # what was left out, one line each ("cell 3: plt.plot(...)")
    notes: tuple[str, ...] = field(default=())  # things the report should mention


CELL_MARK = "# %% cell "  # a notebook's Source.code holds each code cell after such a line (grader.notebook)


def place(source: Source, line: int, *, cell_only: bool = False) -> str:
    """A line of source.code in the student's terms: 'line 12', or in a notebook 'cell 3, line 2'."""
    if source.filename.endswith(".ipynb"):
        lines = source.code.split("\n")
        for i in range(min(line, len(lines)) - 1, -1, -1):
            if lines[i].startswith(CELL_MARK):
                cell = f"cell {lines[i][len(CELL_MARK):].strip()}"
                return cell if cell_only else f"{cell}, line {line - i - 1}"
    return f"line {line}"


def add_options(p) -> None:
    """The command-line options that change how a submission's code is read (plugin, check, grade, replay)."""
    p.add_argument("--defs-only", action="store_true",
                   help="for a .py file: run only imports, definitions and the values they use, not its top-level code")
    p.add_argument("--notebook-mode", choices=["defs", "full"], default="defs",
                   help="notebooks: definitions only (default), or every cell in order")


def options(args) -> dict:
    """`Grading` keyword arguments from the options `add_options` declared."""
    return {"defs_only": args.defs_only, "notebook_mode": args.notebook_mode}


def _candidates(folder: Path) -> list[Path]:
    files = [p for p in sorted(folder.rglob("*")) if p.suffix in (".py", ".ipynb") and p.is_file()]
    return [p for p in files if not any(part.startswith((".", "__")) for part in p.relative_to(folder).parts)]


def read(path: str | Path, names: tuple[str, ...], defs_only: bool = False, notebook_mode: str = "defs") -> tuple[Source, str]:
    """The submission's source and the name of its entry point; LoadError with an actionable message."""
    path = Path(path)
    if not path.exists():
        raise LoadError(f"{path}: no such file or folder")
    if path.is_dir():
        found = _candidates(path)
        if not found:
            raise LoadError(f"{path}: the folder holds no .py or .ipynb file")
        defining = [p for p in found if _defines(p, names)]
        if len(defining) != 1:
            # several or none: let the first file explain (a syntax error, a misspelt name, ...)
            chosen = (defining or found)[0]
        else:
            chosen = defining[0]
        source = _read_file(chosen, defs_only, notebook_mode)
        source = Source(source.code, source.filename, source.module, str(path), source.skipped, source.notes)
    else:
        source = _read_file(path, defs_only, notebook_mode)
    try:
        return source, find_entry(source, names)
    except LoadError as e:
        e.source = source  # the report can still list what definitions-only loading left out
        raise


def _defines(path: Path, names: tuple[str, ...]) -> bool:
    try:
        return bool(set(top_level_names(_read_file(path, False, "defs").code)) & set(names))
    except LoadError:
        return False


def _read_file(path: Path, defs_only: bool, notebook_mode: str) -> Source:
    if path.suffix == ".ipynb":
        from grader import notebook

        return notebook.source(path, notebook_mode)
    if path.suffix != ".py":
        raise LoadError(f"{path}: not a .py file, a notebook or a folder")
    try:
        code = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise LoadError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    source = Source(code, str(path), _module_name(path))
    if defs_only:
        from grader import definitions

        source = definitions.keep_definitions(source)
    return source


def _module_name(path: Path) -> str:
    stem = path.stem if path.stem.isidentifier() else "submission"
    return stem if stem not in ("reference", "grader", "torch", "numpy") else "submission"


def parse(source: Source) -> ast.Module:
    try:
        return ast.parse(source.code, source.filename)
    except SyntaxError as e:
        where = f"{source.filename}, {place(source, e.lineno)}" if e.lineno else source.filename
        raise LoadError(f"syntax error in {where}: {e.msg}" + (f"\n    {e.text.rstrip()}" if e.text else "")) from None


def top_level_names(code: str) -> dict[str, ast.AST]:
    """Names bound at module level: def, class, assignment and import."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return {}
    return _bindings(tree)


def _bindings(tree: ast.Module) -> dict[str, ast.AST]:
    names: dict[str, ast.AST] = {}
    for node in tree.body:
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


def find_entry(source: Source, names: tuple[str, ...]) -> str:
    """The first accepted entry-point name the source defines, after checking that it can take (q, k, v)."""
    bound = _bindings(parse(source))
    for name in names:
        if name in bound:
            node = bound[name]
            if isinstance(node, ast.FunctionDef):
                _check_signature(node, source)
            return name
    functions = [n for n, node in bound.items() if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    close = difflib.get_close_matches(names[0], functions, n=1, cutoff=0.6) or [
        m for name in names[1:] for m in difflib.get_close_matches(name, functions, n=1, cutoff=0.75)
    ][:1]
    hint = f" Did you mean to name {close[0]!r} {_nearest(close[0], names)!r}?" if close else ""
    listed = ", ".join(names)
    have = f" (the file defines: {', '.join(functions)})" if functions else " (the file defines no function)"
    raise LoadError(f"{source.filename}: no function named {listed}{have}.{hint}")


def _nearest(name: str, names: tuple[str, ...]) -> str:
    return max(names, key=lambda n: difflib.SequenceMatcher(None, name, n).ratio())


def _check_signature(node: ast.FunctionDef, source: Source) -> None:
    a = node.args
    positional = len(a.posonlyargs) + len(a.args)
    required_kwonly = [k.arg for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is None]
    required = positional - len(a.defaults)
    if (positional < 3 and a.vararg is None) or required > 3 or required_kwonly:
        params = ast.unparse(a)
        raise LoadError(
            f"{source.filename}, {place(source, node.lineno)}: {node.name}({params}) cannot be called as "
            f"{node.name}(q, k, v): it must take q, k, v as its first three arguments, the others optional"
        )
