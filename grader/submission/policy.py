"""What a submission may not reach: the grader's own packages, by any import the source shows.

The worker also blocks such imports at run time (see worker._Blocker) and reports attempts; both count.
"""

from __future__ import annotations

import ast

from grader.submission.source import TooDeep, tree as syntax_tree, unparsed

_IMPORTERS = {"__import__", "import_module", "find_spec", "spec_from_file_location", "run_module", "run_path"}


def violations(code: str, forbidden: list[str]) -> list[str]:
    """Lines like "line 3: import reference" for every static route to a forbidden package."""
    try:
        tree = syntax_tree(code)
    except (SyntaxError, ValueError, TooDeep):  # the `loads` check says why it cannot be read
        return []
    found = []

    def bad(name: str) -> bool:
        return name.replace("/", ".").split(".")[0] in forbidden or any(f"/{f}/" in name for f in forbidden)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""] if node.level == 0 else []
        elif isinstance(node, ast.Call):
            fn = node.func
            fname = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""
            names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)] if fname in _IMPORTERS else []
        else:
            continue
        for name in names:
            if bad(name):
                found.append(f"line {node.lineno}: {unparsed(node)[:80]}")
    return found
