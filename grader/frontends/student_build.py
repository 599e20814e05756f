"""The student build: a wheel of the self-check for one rubric without the solution.

Taken out of the installed grader's files: the reference (grader/reference/, whole: the planted-bug core with it,
so an exercise's `plant` is only its mask), the code of the rubric's hidden checks (a stub that says "graded after
submission" stands in, so the rubric still validates) and every other rubric. Put in: the rubric as the default
one, and the known answers (checks.known_answers), recorded here by running the rubric's visible checks on the
reference and the diagnosis on every planted variant's probes.

Only whole functions are cut out, by their lines; every other function keeps its source text.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import tempfile
from importlib import resources
from itertools import combinations, product
from pathlib import Path

from grader.frontends import wheel

DATA = "grader/checks/known_answers.pt"


class BuildError(Exception):
    """One line for the teacher."""


def _module_path(module: str) -> str:
    return module.replace(".", "/") + ".py"


def cut(text: str, name: str, replacement: str, where: str) -> str:
    """`text` with the top-level function `name`, decorators included, replaced by `replacement` (its lines)."""
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            start = min([d.lineno for d in node.decorator_list] + [node.lineno])
            lines = text.splitlines(keepends=True)
            return "".join(lines[: start - 1]) + replacement + "".join(lines[node.end_lineno:])
    raise BuildError(f"{where}: no top-level function {name!r} to take out")


_HIDDEN = '''from grader.checks.known_answers import graded_later as _graded_later  # noqa: E402 - a student build
{decorator}({cid!r}, {title!r}, "", "")(_graded_later)  # hidden: graded after submission, its code is not here
'''


def hidden(rubric) -> list[str]:
    """The checks a student does not see (every visibility but "visible"): their code stays with the teacher."""
    from grader.grading.builtin import BUILTIN

    return [cid for cid, spec in rubric.checks.items() if spec.visibility != "visible" and cid not in BUILTIN]


def secrets(rubric) -> dict[str, str]:
    """What must not be in the build, by what it is: the source of every reference module (the planted-bug core,
    reference/planted.py, among them) and hidden check (the tests look for each of these texts in what pip
    installs)."""
    from grader.exercises import EXERCISES

    found = {}
    for path in sorted(Path(str(resources.files("grader.reference"))).glob("*.py")):
        if path.read_text().strip() and path.name != "__init__.py":
            found[f"reference {path.name}"] = path.read_text()
    catalogue = EXERCISES[rubric.exercise].catalogue
    for cid in hidden(rubric):
        found[f"hidden check {cid}"] = inspect.getsource(catalogue[cid].run)
    return found


def student_files(rubric, rubric_file: Path) -> dict[str, bytes]:
    """The installed grader's files with the secrets cut out and the rubric made the only, default one."""
    from grader.exercises import EXERCISES

    files = {p: data for p, data in wheel.package_files().items()
             if not p.startswith(("grader/reference/", "grader/rubrics/")) and p != DATA}
    files["grader/rubrics/__init__.py"] = b""
    files[f"grader/rubrics/{rubric.name}.toml"] = rubric_file.read_bytes()
    text = {p: files[p].decode() for p in files if p.endswith(".py")}
    catalogue = EXERCISES[rubric.exercise].catalogue
    for cid in hidden(rubric):
        fn = catalogue[cid].run
        p = _module_path(fn.__module__)
        node = next(n for n in ast.parse(text[p]).body if isinstance(n, ast.FunctionDef) and n.name == fn.__name__)
        call = node.decorator_list[0]
        assert isinstance(call, ast.Call), f"{fn.__name__}: a check is registered by a call, shared(...) or own(...)"
        decorator = ast.unparse(call.func)  # shared(...) or own(...): registers the stub the same way
        text[p] = cut(text[p], fn.__name__, _HIDDEN.format(decorator=decorator, cid=cid, title=catalogue[cid].title), p)
    init = "grader/grading/__init__.py"
    text[init], n = re.subn(r"^DEFAULT_RUBRIC = .*$", f"DEFAULT_RUBRIC = {rubric.name!r}  # this student build's rubric",
                            text[init], count=1, flags=re.M)
    if n != 1:
        raise BuildError(f"{init}: no DEFAULT_RUBRIC line to set")
    files.update({p: t.encode() for p, t in text.items()})
    return files


def reference_submission(rubric, folder: Path) -> Path:
    """The exercise's reference as a submission file, defining every name the rubric accepts."""
    from grader.exercises import EXERCISES

    found = re.search(r"from grader\.reference\.(\w+) import (\w+)", inspect.getsource(EXERCISES[rubric.exercise].reference))
    if found is None:
        raise BuildError(f"exercise {rubric.exercise}: its reference() names no grader.reference module")
    module, function = found.groups()
    loaded = importlib.import_module(f"grader.reference.{module}")
    assert loaded.__file__ is not None  # a module of a package on disk
    code = Path(loaded.__file__).read_text()
    # a name the reference defines stays its own (a layer exercise's reference class); "*" is no name
    code += "".join(f"\n{name} = {function}\n" for name in rubric.names if name.isidentifier() and not hasattr(loaded, name))
    path = folder / f"reference_{module}.py"
    path.write_text(code)
    return path


def record(rubric, folder: Path):
    """The known answers: the rubric's visible checks run on the reference, every answer it gave kept, under the
    build's own draws (checks.draws): none of them is an example of the teacher's grading."""
    from grader.checks import draws as drawing, known_answers
    from grader.checks.reach import Reach
    from grader.exercises import EXERCISES
    from grader.grading import build as builds, diagnosis
    from grader.grading.engine import Grading
    from grader.grading.outcome import Status

    secret = set(hidden(rubric))
    checks = {cid: spec.model_copy(update={"depends": [d for d in spec.depends if d not in secret]})
              for cid, spec in rubric.checks.items() if cid not in secret}
    visible = rubric.model_copy(update={"checks": checks})  # a hidden check's answers are its data: not recorded
    draws = drawing.student_build(drawing.course())
    book = known_answers.Book(rubric=rubric.name, salt=draws.salt)
    path = reference_submission(rubric, folder)
    grading = Grading(path, visible, build=builds.Recording(book), draws=draws)
    grade = grading.finish()
    book.plan = grading.plan  # what the answers were recorded on: the build replays it (engine.Grading.plan)
    failed = [o.id for o in grade.outcomes if o.status is not Status.PASSED]
    if failed:
        raise BuildError(f"rubric {rubric.name}: the reference does not pass {', '.join(failed)}, so their answers would be incomplete")
    exercise = EXERCISES[rubric.exercise]
    forms = exercise.forms()
    for works in limited_reaches(forms):  # code that handles only some forms draws those
        grading = Grading(path, visible, build=builds.Recording(book), draws=draws)
        grading.reach = Reach(works=works)
        grading.finish()
    if exercise.variants is not None:
        book.record_variants(exercise.variants, diagnosis.candidates(exercise.variants), {f.dims for f in forms})
    return book


def limited_reaches(forms: list) -> list[list]:
    """The reaches of code that handles only some layouts, float32 only, or no value size of its own: each a list
    of the forms that work, in the order tried (checks.reach)."""
    import torch

    def subsets(values, keep=None):
        values = sorted(values, key=str)
        return [set(c) for r in range(1, len(values) + 1) for c in combinations(values, r) if keep is None or keep in c]

    found = []
    for dims, dtypes, dvs in product(subsets({f.dims for f in forms}), subsets({f.dtype for f in forms}, torch.float32),
                                     subsets({f.dv for f in forms}, False)):
        works = [f for f in forms if f.dims in dims and f.dtype in dtypes and f.dv in dvs]
        if works and works != forms and works not in found:
            found.append(works)
    return found


def build(rubric, rubric_file: Path, out: Path) -> Path:
    """Record the answers, assemble the files, write the wheel into `out`; its path."""
    if rubric.parts:  # its book holds one exercise's answers
        raise BuildError(f"a student build takes one exercise: build one per part of {rubric.name} "
                         f"({', '.join(f'--rubric {p.exercise}' for p in rubric.parts.values())})")
    from grader.sandbox import spawn

    spawn.warm_up()
    with tempfile.TemporaryDirectory(prefix="attention-grader-student-") as tmp:
        book = record(rubric, Path(tmp))
        data = Path(tmp) / "known_answers.pt"
        book.save(data)
        files = student_files(rubric, rubric_file)
        files[DATA] = data.read_bytes()
    return wheel.write(out, files, local=f"student.{rubric.name}", requires=rubric.packages,
                       summary=f"Self-check for the {rubric.name} rubric (student build: no reference solution)")
