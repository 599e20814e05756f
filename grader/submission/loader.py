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
from grader.submission.source import LoadError, Source, module_name, parse, place, tree


def _candidates(folder: Path) -> list[Path]:
    files = [p for p in sorted(folder.rglob("*")) if p.suffix in (".py", ".ipynb") and p.is_file()]
    return [p for p in files if not any(part.startswith((".", "__")) for part in p.relative_to(folder).parts)]


def read(path: str | Path, names: tuple[str, ...], inputs: tuple[str, ...] = ("q", "k", "v"),
         reading: Reading = Reading(), shown: str | Path | None = None) -> tuple[Source, str]:
    """The submission's source and the name of its entry point, which must take the exercise's positional `inputs`;
    LoadError with an actionable message. `path` is what is read (the staged copy); `shown`, the path the student
    knows it by, is what messages and tracebacks name (by default `path` itself)."""
    path = Path(path)
    name = _Names(path, Path(shown) if shown is not None else path)
    if not path.exists():
        raise LoadError(f"{name(path)}: no such file or folder")
    if path.is_dir():
        found = _candidates(path)
        if not found:
            raise LoadError(f"{name(path)}: the folder holds no .py or .ipynb file")
        defining = [p for p in found if _defines(p, names, name)]
        if len(defining) != 1:
            # several or none: let the first file explain (a syntax error, a misspelt name, ...)
            chosen = (defining or found)[0]
        else:
            chosen = defining[0]
        source = _read_file(chosen, reading, name)
        source = Source(source.code, source.filename, source.module, str(path), source.skipped, source.notes)
    else:
        source = _read_file(path, reading, name)
    try:
        return source, find_entry(source, names, inputs)
    except LoadError as e:
        e.source = source  # the report can still list what definitions-only loading left out
        raise


class _Names:
    """A file of the copy by the name the student knows it."""

    def __init__(self, copy: Path, shown: Path):
        self.copy, self.shown = copy, shown

    def __call__(self, p: Path) -> str:
        return str(self.shown / p.relative_to(self.copy)) if p != self.copy else str(self.shown)


def _defines(path: Path, names: tuple[str, ...], name: _Names) -> bool:
    try:
        return bool(set(top_level_names(_read_file(path, Reading(), name).code)) & set(names))
    except LoadError:
        return False


def _read_file(path: Path, reading: Reading, name: _Names) -> Source:
    shown = name(path)
    if path.suffix == ".ipynb":
        from grader.submission import notebook  # nbformat's import, only for notebooks

        return notebook.source(path, reading.notebook_mode, shown)
    if path.suffix != ".py":
        raise LoadError(f"{shown}: not a .py file, a notebook or a folder")
    try:
        code = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise LoadError(f"{shown}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    source = Source(code, shown, module_name(path))
    if reading.defs_only:
        source = definitions.keep_definitions(source)
    return source


def top_level_names(code: str) -> dict[str, ast.AST]:
    """Names bound at module level: def, class, assignment and import."""
    try:
        found = tree(code)
    except (SyntaxError, ValueError):
        return {}
    return _bindings(found)


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


def find_entry(source: Source, names: tuple[str, ...], inputs: tuple[str, ...] = ("q", "k", "v")) -> str:
    """The first accepted entry-point name the source defines, after checking that it can take the `inputs`."""
    bound = _bindings(parse(source))
    for name in names:
        if name in bound:
            node = bound[name]
            if isinstance(node, ast.FunctionDef):
                _check_signature(node, source, inputs)
            return name
    if ANY_MODULE in names:  # a layer exercise: failing its names, the file's one nn.Module class with a forward
        layers = [n for n, node in bound.items() if isinstance(node, ast.ClassDef) and _is_layer(node)]
        if len(layers) == 1:
            return layers[0]
    names = tuple(n for n in names if n != ANY_MODULE) or names
    functions = [n for n, node in bound.items() if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    close = difflib.get_close_matches(names[0], functions, n=1, cutoff=0.6) or [
        m for name in names[1:] for m in difflib.get_close_matches(name, functions, n=1, cutoff=0.75)
    ][:1]
    hint = f" Did you mean to name {close[0]!r} {_nearest(close[0], names)!r}?" if close else ""
    listed = ", ".join(names)
    have = f" (the file defines: {', '.join(functions)})" if functions else " (the file defines no function)"
    raise LoadError(f"{source.filename}: no function named {listed}{have}.{hint}")


ANY_MODULE = "*"  # in an exercise's entry points: the one nn.Module subclass of the file, whatever its name


def _is_layer(node: ast.ClassDef) -> bool:
    """A class whose base is named Module (nn.Module, torch.nn.Module) and that defines forward."""
    based = any((isinstance(b, ast.Attribute) and b.attr == "Module") or (isinstance(b, ast.Name) and b.id == "Module")
                for b in node.bases)
    return based and any(isinstance(f, ast.FunctionDef) and f.name == "forward" for f in node.body)


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
        params, listed = ast.unparse(a), ", ".join(inputs)
        raise LoadError(
            f"{source.filename}, {place(source, node.lineno)}: {node.name}({params}) cannot be called as "
            f"{node.name}({listed}): it must take {listed} as its first {_COUNT.get(n, n)} arguments, the others optional"
        )
