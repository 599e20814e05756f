"""The student build: a wheel of the self-check for one rubric without the solution.

Taken out of the installed grader's files: the reference (grader/reference/, whole: the planted-bug core with it,
so an exercise's `plant` is only its mask), the code of the rubric's hidden checks (a stub that says "graded after
submission" stands in, so the rubric still validates) and every other rubric. Put in: the rubric as the default
one (a rubric in parts written whole), and the known answers (checks.known_answers), recorded here by running the
rubric's visible checks on the reference (a layer class's in every structure) and the diagnosis on every planted
variant's probes; for a rubric in parts, one book per part.

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


def pieces(rubric) -> list:
    """What is graded on its own: a rubric in parts' parts (each a whole rubric, its overrides applied), else the
    rubric."""
    return list(rubric.parts.values()) or [rubric]


def hidden(rubric) -> list[str]:
    """The checks a student does not see (every visibility but "visible"): their code stays with the teacher. A
    rubric's own ids (a part's for a part), not a rubric in parts' "part.check"."""
    from grader.grading.builtin import BUILTIN

    return [cid for cid, spec in rubric.checks.items() if spec.visibility != "visible" and cid not in BUILTIN]


def _hidden_runs(rubric) -> dict:
    """Every part's hidden checks' code, by function (one cut for a check hidden in several parts; a check hidden
    in one part is cut for all: its code must not ship)."""
    from grader.exercises import EXERCISES

    found: dict = {}
    for piece in pieces(rubric):
        catalogue = EXERCISES[piece.exercise].catalogue
        for cid in hidden(piece):
            found.setdefault(catalogue[cid].run, (cid, catalogue[cid].title))
    return found


def secrets(rubric) -> dict[str, str]:
    """What must not be in the build, by what it is: the source of every reference module (the planted-bug core,
    reference/planted.py, among them) and hidden check (the tests look for each of these texts in what pip
    installs)."""
    found = {}
    for path in sorted(Path(str(resources.files("grader.reference"))).glob("*.py")):
        if path.read_text().strip() and path.name != "__init__.py":
            found[f"reference {path.name}"] = path.read_text()
    for fn, (cid, _) in _hidden_runs(rubric).items():
        found[f"hidden check {cid}"] = inspect.getsource(fn)
    return found


def student_files(rubric, rubric_file: Path) -> dict[str, bytes]:
    """The installed grader's files with the secrets cut out and the rubric made the only, default one: a rubric
    in parts written whole (grading.rubric.dumps), since its parts name rubrics the build leaves out."""
    from grader.grading.rubric import dumps

    files = {p: data for p, data in wheel.package_files().items()
             if not p.startswith(("grader/reference/", "grader/rubrics/")) and p != DATA}
    files["grader/rubrics/__init__.py"] = b""
    files[f"grader/rubrics/{rubric.name}.toml"] = (
        f"# {rubric.name}, each part whole as the teacher's grader read it (attention-grader bundle student)\n"
        f"{dumps(rubric)}".encode() if rubric.parts else rubric_file.read_bytes())
    text = {p: files[p].decode() for p in files if p.endswith(".py")}
    for fn, (cid, title) in _hidden_runs(rubric).items():
        p = _module_path(fn.__module__)
        node = next(n for n in ast.parse(text[p]).body if isinstance(n, ast.FunctionDef) and n.name == fn.__name__)
        call = node.decorator_list[0]
        assert isinstance(call, ast.Call), f"{fn.__name__}: a check is registered by a call, shared(...) or own(...)"
        decorator = ast.unparse(call.func)  # shared(...) or own(...): registers the stub the same way
        text[p] = cut(text[p], fn.__name__, _HIDDEN.format(decorator=decorator, cid=cid, title=title), p)
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


# A layer handed in as a class is drawn weights for the roles it has and a head count only where its constructor
# takes one (exercises.module_inputs): Karpathy's MultiHeadAttention (no q/k/v bias), Raschka's CausalAttention (one
# head, no output projection)... meet other inputs than the reference class. The reference class with the same
# structure gives the reference's answers on them: no bias is a zero bias, no output projection W_O = I, b_O = 0.
STRUCTURES = [(heads, qkv_bias, out) for heads in (True, False) for qkv_bias in (True, False)
              for out in ("bias", "no bias", "none") if (heads, qkv_bias, out) != (True, True, "bias")]

_STRUCTURE = """

_Reference = {cls}


class {cls}(_Reference):  # the reference: {words} (attention-grader bundle student)
    def __init__(self, d_model{heads_param}, dropout=0.0):
        super().__init__(d_model, {heads}, dropout, bias={qkv_bias})
        self.o_proj = {out}
"""


def structures(rubric, path: Path) -> list[Path]:
    """The reference layer class of every other structure (STRUCTURES), each a file beside `path` (its reference
    submission); none for an exercise whose submission is a function."""
    import torch

    from grader.exercises import EXERCISES

    if EXERCISES[rubric.exercise].build is None:
        return []
    code = path.read_text()
    scope: dict = {}
    exec(compile(code, str(path), "exec"), scope)  # the reference, in the teacher's grader
    classes = [n for n in rubric.names if isinstance(scope.get(n), type) and issubclass(scope[n], torch.nn.Module)]
    if not classes:
        raise BuildError(f"exercise {rubric.exercise}: its reference defines no layer class of the rubric's names")
    found = []
    for i, (heads, qkv_bias, out) in enumerate(STRUCTURES):
        words = ", ".join([f"{'several heads' if heads else 'one head, no head count'}",
                           f"q/k/v {'with' if qkv_bias else 'without'} bias", f"output projection: {out}"])
        made = {"bias": "torch.nn.Linear(d_model, d_model)", "no bias": "torch.nn.Linear(d_model, d_model, bias=False)",
                "none": "torch.nn.Identity()"}[out]
        structure = path.with_name(f"{path.stem}_structure{i}.py")
        structure.write_text(code + _STRUCTURE.format(cls=classes[0], words=words, heads_param=", num_heads" * heads,
                                                      heads="num_heads" if heads else 1, qkv_bias=qkv_bias, out=made))
        found.append(structure)
    return found


def record(rubric, folder: Path, draws=None):
    """The known answers: the rubric's visible checks run on the reference, every answer it gave kept, under the
    build's own draws (checks.draws): none of them is an example of the teacher's grading. A rubric in parts: one
    book per part, each recorded on its part's reference with the part's overrides, under the same draws."""
    from grader.checks import draws as drawing, known_answers
    from grader.checks.reach import Reach
    from grader.exercises import EXERCISES
    from grader.grading import build as builds, diagnosis, plan as plans
    from grader.grading.engine import Grading
    from grader.grading.outcome import Status

    draws = draws or drawing.student_build(drawing.course())
    if rubric.parts:
        whole = known_answers.Book(rubric=rubric.name, salt=draws.salt)
        for name, part in rubric.parts.items():
            (folder / name).mkdir(exist_ok=True)
            whole.parts[name] = record(part, folder / name, draws)
        return whole
    secret = set(hidden(rubric))
    checks = {cid: spec.model_copy(update={"depends": [d for d in spec.depends if d not in secret]})
              for cid, spec in rubric.checks.items() if cid not in secret}
    visible = rubric.model_copy(update={"checks": checks})  # a hidden check's answers are its data: not recorded
    book = known_answers.Book(rubric=rubric.name, salt=draws.salt)
    path = reference_submission(rubric, folder)
    recording = builds.Recording(book)  # one for every grading below: what one draws, the others replay
    grading = Grading(path, visible, build=recording, draws=draws, planned=False)
    grading.recorded = {}  # the plan, drawn as the answers are recorded: the build replays it (engine.Grading.plan)
    grade = grading.finish()
    failed = [o.id for o in grade.outcomes if o.status is not Status.PASSED]
    if failed:
        raise BuildError(f"rubric {rubric.name}: the reference does not pass {', '.join(failed)}, so their answers would be incomplete")
    book.plan = grading.recorded
    exercise = EXERCISES[rubric.exercise]
    forms = exercise.forms()
    others = structures(rubric, path)
    for structure in others:  # not held to pass: a check may misjudge a structure, and then does so in both graders
        Grading(structure, visible, build=recording, draws=draws).finish()
    for works in limited_reaches(forms):  # code that handles only some forms draws those
        for each in [path, *others]:
            grading = Grading(each, visible, build=recording, draws=draws, planned=each is not path)
            grading.reach = Reach(works=works)
            if each is path:  # the plan such code replays (grading.build.Student.plan), as the teacher's grader's
                book.reach_plans[repr(tuple(works))] = plans.passed(grading)
            else:
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
    """Record the answers, assemble the files, write the wheel into `out`; its path. A rubric in parts is one
    wheel: its book holds one book per part (grading.build.Student.part)."""
    from grader.sandbox import spawn

    spawn.warm_up(meta=True)  # a grading for each structure and reach: their workers inherit the meta kernels
    with tempfile.TemporaryDirectory(prefix="attention-grader-student-") as tmp:
        book = record(rubric, Path(tmp))
        data = Path(tmp) / "known_answers.pt"
        book.save(data)
        files = student_files(rubric, rubric_file)
        files[DATA] = data.read_bytes()
    return wheel.write(out, files, local=f"student.{rubric.name}", requires=rubric.packages,
                       summary=f"Self-check for the {rubric.name} rubric (student build: no reference solution)")
