"""Definitions only: what a submission defines, without the experiments around it.

Kept, in their order: imports, function and class definitions, aliases of them (`attention = my_attention`), and
the assignments (or if/try/with blocks) that bind a global name the code grading reaches reads, transitively. That
code is the entry point the rubric names (the first of its names the file binds, or for a layer exercise's "*" the
file's one nn.Module class: source.entry_name) and what it reads, followed through the module: the classes and
functions it uses, the globals they read (in the bodies, by the compiler's own scoping: symtable), their bases,
decorators and default values. Karpathy's gpt.py keeps `n_embd = 384` for MultiHeadAttention but not
`with open('input.txt') as f: text = f.read()`, which only get_batch's train_data needs. A definition grading does
not reach stays (defining runs no body) unless defining it evaluates a value left out (a default of `train_data`):
then it is dropped too and listed. Where no entry point can be told (no names given, none bound, several layer
classes for "*"), every definition counts as reached. Functions look their globals up when they are called, so a
constant assigned after the function (a later notebook cell) works.
Everything else at top level is dropped and listed in Source.skipped: loops, calls, plots, prints,
`if __name__ == "__main__":`. So is an import of a package the grading machine lacks (the grader and its workers
share one Python environment, so `find_spec` here answers for the worker); the notes say which.
Kept statements stay on their own line numbers, so errors point at the lines the student wrote.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import symtable
from collections.abc import Callable
from pathlib import Path

from grader.submission.source import Source, bindings, bounded, entry_name, parse, place

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_IMPORTS = (ast.Import, ast.ImportFrom)
_BINDERS = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.If, ast.Try, ast.With)  # kept if they bind a needed name
_COMPOUND = _DEFS + (ast.If, ast.Try, ast.With)  # these own whole lines
_SCOPES = _DEFS + (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_NOT_INSTALLED = "not installed on the grading machine"


def keep_definitions(source: Source, names: tuple[str, ...] = ()) -> Source:
    """names: the entry points the rubric accepts; the values kept are those the one the source binds needs."""
    source = dataclasses.replace(source, code=source.code.replace("\r\n", "\n").replace("\r", "\n"))
    tree = parse(source)
    with bounded(source.filename):  # a walk the text makes recurse: TooDeep, one line, never a traceback
        entry = entry_name(bindings(tree), names)
        kept, dropped, notes = _select(tree, Path(source.filename).parent, _Reads(source.code), entry)
        order = {n: i for i, n in enumerate(tree.body)}
        if any(not why and not _silent(n) for n, why in dropped):
            notes.insert(0, f"only definitions ran: imports, functions, classes and the values {entry or 'they'} "
                            f"use{'s' * bool(entry)}; the other top-level code (loops, calls, prints, plots) did not")
        lines = source.code.split("\n")
        return dataclasses.replace(
            source,
            code=_render(lines, sorted(kept.items(), key=lambda k: order[k[0]])),
            skipped=source.skipped + tuple(_describe(source, lines, sorted(dropped, key=lambda d: order[d[0]]), order)),
            notes=source.notes + tuple(dict.fromkeys(notes)),
        )


def _select(tree: ast.Module, here: Path, reads: Callable[[ast.stmt], set[str]],
            entry: str | None) -> tuple[dict, list, list[str]]:
    """({kept statement: its text if rewritten, else None}, [(dropped statement, why)], notes)."""
    kept: dict[ast.stmt, str | None] = {}
    dropped: list[tuple[ast.stmt, str]] = []  # why: "" for ordinary top-level code
    notes: list[str] = []
    for node in tree.body:
        if isinstance(node, _IMPORTS):
            missing = [a for a in node.names if not _installed(node, a, here)]
            notes += [f"import of {_module(node, a)!r} skipped: {_NOT_INSTALLED}" for a in missing]
            if len(missing) == len(node.names):
                dropped.append((node, _NOT_INSTALLED))
            else:  # `import torch, wandb` keeps torch
                kept[node] = ast.unparse(ast.Import([a for a in node.names if a not in missing])) if missing else None
        elif isinstance(node, _DEFS):
            kept[node] = None
    defined = set().union(*map(_binds, kept))
    maybe = []  # assignments and if/try/with blocks: kept when they bind a name the reached code reads
    for node in tree.body:
        if node in kept or isinstance(node, _IMPORTS):
            continue
        if _is_alias(node, defined):
            kept[node] = None
        elif isinstance(node, _BINDERS) and not _is_main_guard(node):
            maybe.append(node)
        else:
            dropped.append((node, ""))
    # what grading reaches: the entry point and what it reads, transitively (without one, every definition)
    reached = {n for n in kept if entry is None or isinstance(n, _IMPORTS)}
    needed = set().union(*map(reads, reached)) | ({entry} if entry else set())
    grew = True
    while grew:  # a class reached uses another, an assignment kept may itself read another constant...
        grew = False
        for node in [n for n in kept if n not in reached] + maybe:
            if node not in reached and _binds(node) & needed:
                reached.add(node)
                needed |= reads(node)
                grew = True
    kept.update((n, None) for n in maybe if n in reached)
    dropped += [(n, "") for n in maybe if n not in reached]
    if entry is not None:
        dropped += _unevaluable(tree, kept, reached, entry)
    return kept, dropped, notes


def _unevaluable(tree: ast.Module, kept: dict, reached: set, entry: str) -> list[tuple[ast.stmt, str]]:
    """The definitions and aliases grading does not reach whose definition evaluates a global left out (a default
    of `train_data`, a base class of a left-out call, an alias of such a class), taken out of `kept`."""
    bound = set().union(*(_binds(n) for n in tree.body))
    gone: list[tuple[ast.stmt, str]] = []
    while True:
        missing = bound - set().union(*map(_binds, kept))
        found = [(n, sorted(_at_definition(n) & missing)) for n in kept if n not in reached and not isinstance(n, _IMPORTS)]
        found = [(n, names) for n, names in found if names]
        if not found:
            return gone
        for node, names in found:
            del kept[node]
            gone.append((node, f"not needed by {entry}, and defining it needs {', '.join(names)}, which did not run"))


def _at_definition(node: ast.stmt) -> set[str]:
    """Global names a def, class or alias statement evaluates when it runs (not a function's body, nor a method's)."""
    if not isinstance(node, _DEFS):
        return _loads(node)
    found = _loads(*_outer(node))
    if isinstance(node, ast.ClassDef):  # the class body runs when the class is defined; its own names are its own
        inside = set().union(set(), *(_at_definition(s) if isinstance(s, _DEFS) else _loads(s) for s in node.body))
        found |= inside - set().union(set(), *map(_binds, node.body))
    return found


def _loads(*nodes: ast.AST) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


class _Reads:
    """Global names a top-level statement reads when it runs, or a function or class when it is used: for a def or
    class, the globals its body refers to by the compiler's own scoping (symtable; the syntax tree's names where
    symtable refuses the module) and what defining it evaluates."""

    def __init__(self, code: str):
        try:
            top = symtable.symtable(code, "<submission>", "exec")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            # what ast.parse accepts and the compiler does not (`nonlocal` at top level), or nests deeper than it goes
            self.tables: dict[tuple[str, int], symtable.SymbolTable] = {}
        else:
            self.tables = {(t.get_name(), t.get_lineno()): t for t in top.get_children()}

    def __call__(self, node: ast.stmt) -> set[str]:
        if not isinstance(node, _DEFS):
            return _loads(node)
        table = self.tables.get((node.name, node.lineno))
        if table is None:
            return _reads(node)
        found: set[str] = set()
        todo = [table]
        while todo:
            t = todo.pop()
            found.update(s.get_name() for s in t.get_symbols() if s.is_referenced() and s.is_global())
            todo.extend(t.get_children())
        return found | _loads(*_outer(node))


def _outer(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> list[ast.AST]:
    """What the module evaluates when it runs the def or class statement (the class body is the class's own scope)."""
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *[k.value for k in node.keywords]]
    a = node.args
    parts: list[ast.AST] = [*node.decorator_list, *a.defaults, *[d for d in a.kw_defaults if d is not None]]
    parts += [x.annotation for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if x and x.annotation]
    return parts + ([node.returns] if node.returns else [])


def _module(node: ast.stmt, alias: ast.alias) -> str:
    """The top-level package an import needs."""
    return ((node.module or "") if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]


def _installed(node: ast.stmt, alias: ast.alias, here: Path) -> bool:
    if isinstance(node, ast.ImportFrom) and node.level:
        return True  # relative: the folder's own package
    top = _module(node, alias)
    if (here / f"{top}.py").is_file() or (here / top).is_dir():
        return True  # a helper module beside the submission
    try:
        return importlib.util.find_spec(top) is not None  # finds, never imports
    except (ImportError, ValueError):
        return False


def _is_alias(node: ast.stmt, defined: set[str]) -> bool:
    """`attention = my_attention` or `attention = F.scaled_dot_product_attention`: a name for something defined."""
    if not (isinstance(node, ast.Assign) and isinstance(node.value, (ast.Name, ast.Attribute))):
        return False
    root: ast.expr = node.value
    while isinstance(root, ast.Attribute):
        root = root.value
    return isinstance(root, ast.Name) and root.id in defined


def _is_main_guard(node: ast.stmt) -> bool:
    """`if __name__ == "__main__":`, either way round; read from the tree (ast.unparse recurses as deep as the test)."""
    test = node.test if isinstance(node, ast.If) else None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = (test.left, test.comparators[0])
    return any(isinstance(a, ast.Name) and a.id == "__name__" and isinstance(b, ast.Constant) and b.value == "__main__"
               for a, b in (sides, sides[::-1]))


def _binds(node: ast.stmt) -> set[str]:
    """Global names the statement binds (not the locals of a function, lambda or comprehension inside it)."""
    names: set[str] = set()
    todo: list[ast.AST] = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, _DEFS):
            names.add(n.name)
        elif isinstance(n, _IMPORTS):
            names.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.add(n.id)
        if not isinstance(n, _SCOPES):
            todo.extend(ast.iter_child_nodes(n))
    return names


def _reads(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> set[str]:
    """The globals a def or class reads, from the syntax tree's names alone (where symtable refuses the module): a
    name stored anywhere inside counts as local."""
    loads = _loads(node)
    local, declared = set(), set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            local.add(n.id)
        elif isinstance(n, ast.arg):
            local.add(n.arg)
        elif isinstance(n, _DEFS) and n is not node:
            local.add(n.name)
        elif isinstance(n, _IMPORTS):
            local.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, ast.Global):
            declared.update(n.names)
    return (loads - local) | (loads & declared) | _loads(*_outer(node))


def _silent(node: ast.stmt) -> bool:
    """Docstrings and `pass`: nothing a student would miss."""
    return isinstance(node, ast.Pass) or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))


def _segment(lines: list[str], node: ast.stmt) -> str:
    """ast.get_source_segment from the code's lines split once: it splits the whole code, character by character
    in Python, at every call, which made definitions-only reading quadratic in the number of statements."""
    first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    start, end = node.col_offset, node.end_col_offset
    if first == last:
        return lines[first].encode()[start:end].decode()
    return "\n".join([lines[first].encode()[start:].decode(), *lines[first + 1:last],
                      lines[last].encode()[:end].decode()])


def _describe(source: Source, lines: list[str], dropped: list[tuple[ast.stmt, str]], order: dict) -> list[str]:
    """'cell 3: for step in range(10_000): (+2 more statements)': one entry per run of adjacent dropped statements
    in one cell (in a .py file, per run). `lines`: source.code's."""
    entries: list[list] = []  # [where, first line, how many more]
    last = None  # (cell, index, why) of the previous dropped statement
    for node, why in dropped:
        where, index = place(source, node.lineno, cell_only=True), order[node]
        if _silent(node):
            last = last and (last[0], index, last[2])
            continue
        cell = where if where.startswith("cell") else ""
        if last and not why and not last[2] and last[0] == cell and last[1] == index - 1:
            entries[-1][2] += 1
        else:
            text = _segment(lines, node).split("\n")[0].strip()
            text = text if len(text) <= 80 else text[:77] + "..."
            entries.append([where, text + (f" ({why})" if why else ""), 0])
        last = (cell, index, why)
    return [f"{where}: {text}" + (f" (+{more} more statement{'s' * (more > 1)})" if more else "") for where, text, more in entries]


def _render(lines: list[str], kept: list[tuple[ast.stmt, str | None]]) -> str:
    """The kept statements on their original lines (`lines`: the code's); blank lines (and the comments) where the
    rest was."""
    out = [line if line.lstrip().startswith("#") else "" for line in lines]
    used: set[int] = set()  # lines that already hold a kept statement (`a = 1; b = 2`)
    for node, text in kept:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1
        if isinstance(node, _COMPOUND):
            segment = lines[first:node.end_lineno]
        else:
            segment = (text or _segment(lines, node)).split("\n")
            segment[0] = out[first] + "; " + segment[0] if first in used else segment[0]
        out[first:first + len(segment)] = segment
        used.update(range(first, first + len(segment)))
    return "\n".join(out)
