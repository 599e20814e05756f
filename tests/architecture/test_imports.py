"""The package's shape: stages import only downwards, no import circles, student code only on the worker's side,
and the installed package names every subpackage."""

import ast
import re
import tomllib
from pathlib import Path

from conftest import ROOT

GRADER = ROOT / "grader"
# the pipeline, in order
STAGES = ["submission", "sandbox", "checks", "exercises", "grading", "insight", "reports", "frontends"]
WORKER = "grader.sandbox.worker"
WORKER_MAY_IMPORT = ("grader.sandbox.wire", "grader.sandbox.spawn", WORKER)  # the fork server preloads spawn too


def modules() -> dict[str, Path]:
    found = {}
    for path in GRADER.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name: str, path: Path) -> set[str]:
    """Every grader module `name` imports, at the top or inside a function (lazy imports hide no circle)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            found |= {base} | {f"{base}.{a.name}" for a in node.names}
    known = modules()
    return {m for m in found if m in known and m != name and not name.startswith(m + ".")}


def stage(name: str) -> int | None:
    parts = name.split(".")
    return STAGES.index(parts[1]) if len(parts) > 1 and parts[1] in STAGES else None


GRAPH = {name: imports(name, path) for name, path in modules().items()}


def test_no_import_circle():
    def reach(start):
        seen, todo = set(), [start]
        while todo:
            for d in GRAPH[todo.pop()]:
                if d not in seen:
                    seen.add(d)
                    todo.append(d)
        return seen

    circles = sorted(name for name in GRAPH if name in reach(name))
    assert circles == [], f"import circles through {circles}"


def test_stages_import_only_downwards():
    upward = [(a, b) for a, deps in GRAPH.items() for b in deps
              if stage(a) is not None and stage(b) is not None and stage(b) > stage(a)]
    assert upward == []


def test_only_the_worker_side_is_the_worker_side():
    leaks = [(a, b) for a, deps in GRAPH.items() for b in deps if a.startswith(WORKER) and not b.startswith(WORKER_MAY_IMPORT)]
    assert leaks == [], "the worker's side imports grader code it must not run beside student code"
    into = [(a, b) for a, deps in GRAPH.items() for b in deps
            if b.startswith(WORKER) and not a.startswith(WORKER) and a != "grader.sandbox.spawn"]
    assert into == [], "only spawn (the launch) names the worker's code from the grader's side"


def test_every_stage_says_what_it_is():
    for name in STAGES:
        init = GRADER / name / "__init__.py"
        assert ast.get_docstring(ast.parse(init.read_text())), f"{init} needs a one-line docstring"


def test_installed_package_names_every_subpackage():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    here = {".".join(p.parent.relative_to(ROOT).parts) for p in GRADER.rglob("__init__.py")}
    assert here | {"grader.rubrics", "grader.reference"} == listed
    assert "reference" not in listed  # no generic top-level package in a user's site-packages


def test_architecture_names_every_module():
    """ARCHITECTURE.md matches the tree: every module of grader/ and reference/ is named there, and every
    `name.py` it names exists."""
    text = (ROOT / "ARCHITECTURE.md").read_text()
    files = {p.name for p in [*GRADER.rglob("*.py"), *(ROOT / "reference").glob("*.py")] if p.name != "__init__.py"}
    named = set(re.findall(r"`(?:[\w/]+/)?(\w+\.py)`", text)) | set(re.findall(r"(\w+)\*\.py", text))
    missing = sorted(f for f in files if f not in named and not any(f.startswith(p) for p in named))
    assert missing == [], f"ARCHITECTURE.md does not name {missing}"
    anywhere = {p.name for p in ROOT.rglob("*.py") if ".venv" not in p.parts}
    assert sorted(n for n in named if n.endswith(".py") and n not in anywhere) == []


def test_no_module_of_the_grader_is_over_350_lines():
    """A module over ~350 lines does more than one job: split it by job (client.py's replies, modules.py's layout,
    engine.py's built-in checks)."""
    long = {str(p.relative_to(ROOT)): n for p in GRADER.rglob("*.py") if (n := len(p.read_text().splitlines())) > 350}
    assert long == {}
