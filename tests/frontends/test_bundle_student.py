"""`attention-grader bundle student`: a wheel of the self-check without the solution. Installed with pip into a
fresh venv, it holds no reference, no planted bug and no hidden check's code, and gives samples of every kind the
teacher's verdict on every check (the hidden one shown as "graded after submission") and the same likely mistakes.
Graded from its book as a build grades, every sample of every bundled rubric gets the teacher's verdicts."""

from __future__ import annotations

import base64
import dataclasses
import json
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest
from hypothesis import Phase

from conftest import CH5_DIR, ROOT, SUBMISSIONS, built_once, identical

from grader.checks import known_answers
from grader.exercises import EXERCISES
from grader.frontends import student_build
from grader.frontends.grade import submissions
from grader.grading.rubric import load

HIDDEN = "batch_independence"  # needs no reference: the checks that do stay visible, so their answers are tested


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """chapter5 with one check hidden, as a teacher's own rubric file."""
    text = (ROOT / "rubrics" / "chapter5.toml").read_text()
    lines = text.splitlines()
    lines.insert(lines.index(f"[checks.{HIDDEN}]") + 1, 'visibility = "hidden"')
    path = tmp_path_factory.mktemp("course") / "course.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def student(course) -> Path:
    """A fresh venv with the student wheel pip-installed (--no-deps: torch and the rest come from this venv's
    site-packages through a .pth line after its own, so the grader it imports is the student build's). Built once
    per test run; no test changes it."""
    with built_once("student") as (tmp, fresh):
        if fresh:
            build_student(course, tmp)
    return tmp / "venv"


def build_student(course: Path | str, tmp: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "grader.frontends.cli", "bundle", "student", "--rubric", str(course),
                           "-o", str(tmp / "dist")], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    (whl,) = (tmp / "dist").glob("*.whl")
    assert done.stdout.strip() == str(tmp / "dist" / whl.name)
    env = tmp / "venv"
    venv.create(env)  # no pip of its own (ensurepip: 3-4 s): this venv's pip installs into it
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", str(env / "bin" / "python"), "install", "-q", "--no-deps",
                          str(whl)], capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stderr
    (site_packages(env) / "zz_teacher_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")


def site_packages(env: Path) -> Path:
    return next(env.glob("lib/python*/site-packages"))


def installed(env: Path) -> dict[str, str]:
    """Every file pip installed for the grader, by its path in site-packages."""
    site = site_packages(env)
    (record,) = site.glob("attention_grader-*.dist-info/RECORD")
    paths = [line.split(",")[0] for line in record.read_text().splitlines() if line and "__pycache__" not in line]
    return {p: (site / p).read_bytes().decode("utf-8", "replace") for p in paths if (site / p).is_file()}


def in_student(env: Path, *args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(env / "bin" / "attention-grader"), *map(str, args)], capture_output=True, text=True,
                          timeout=900, **kw)


def test_the_build_installs_no_reference_no_planted_bugs_no_hidden_check(student, course):
    files = installed(student)
    assert "grader/checks/known_answers.pt" in files and "grader/frontends/check.py" in files
    assert not [p for p in files if p.startswith("grader/reference/")]
    assert sorted(p for p in files if p.startswith("grader/rubrics/")) == ["grader/rubrics/__init__.py", "grader/rubrics/chapter5.toml"]
    secrets = student_build.secrets(load(str(course)))
    assert {"reference chapter5.py", "reference planted.py", f"hidden check {HIDDEN}"} <= set(secrets)
    leaks = [(what, path) for what, text in secrets.items() for path, content in files.items() if text.strip() in content]
    assert leaks == []
    probe = subprocess.run([str(student / "bin" / "python"), "-c", "import grader.reference"], capture_output=True, text=True)
    assert probe.returncode != 0 and "grader.reference" in probe.stderr


def test_a_student_checks_a_file_with_the_build_alone(student, tmp_path):
    done = in_student(student, "check", CH5_DIR / "correct_basic.py", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ready to hand in" in done.stdout and f"{HIDDEN} graded after submission" in done.stdout
    bug = in_student(student, "check", CH5_DIR / "bug_zero_fill.py", "--feedback", tmp_path / "fb", cwd=tmp_path)
    assert bug.returncode == 1 and "Likely mistake: zero fill" in bug.stdout
    assert (tmp_path / "fb" / "feedback.html").is_file()


# Through the installed wheel: a sample of each kind. Every visible check's source must have survived the cut
# byte for byte, or hypothesis would draw inputs the book has no answer for and a correct file would not pass.
# Every sample of every rubric is compared below, in this process, graded from a book as the build grades.
THROUGH_THE_WHEEL = ["correct_basic.py", "correct_folder", "correct_notebook.ipynb", "public_annotated_transformer.py",
                     "limited_nanogpt.py", "vacuous_zeros.py", "bug_zero_fill.py", "bug_no_scaling.py", "bug_dropout.py",
                     "bug_T_from_dim1.py"]


def test_the_wheel_gives_the_teachers_verdicts(student, grade_of, tmp_path):
    class_folder = tmp_path / "class"
    class_folder.mkdir()
    for name in THROUGH_THE_WHEEL:
        (shutil.copytree if (CH5_DIR / name).is_dir() else shutil.copy)(CH5_DIR / name, class_folder / name)
    out = tmp_path / "grades"
    done = in_student(student, "grade", class_folder, "--out", out, "--workers", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    differ = {}
    for name in THROUGH_THE_WHEEL:
        teacher = grade_of(CH5_DIR / name, "chapter5")  # a check's verdict does not depend on its visibility
        (got, mistakes), (want, named) = verdicts(json.loads((out / name / "results.json").read_text())), verdicts(teacher)
        if want[HIDDEN][0] != "skipped":  # a prerequisite that failed skips it in both
            want[HIDDEN] = ("graded after submission", 0)
        if got != want or mistakes != named:
            differ[name] = {c: (want.get(c), got.get(c)) for c in want if want.get(c) != got.get(c)} or mistakes
    assert differ == {}


# -- a rubric in parts: one wheel, one book per part --------------------------------------------------------------
@pytest.fixture(scope="module")
def cs336() -> Path:
    """The student wheel of cs336 in a fresh venv, as `student` above."""
    with built_once("student-cs336") as (tmp, fresh):
        if fresh:
            build_student("cs336", tmp)
    return tmp / "venv"


CS336 = SUBMISSIONS / "cs336"
CS336_THROUGH_THE_WHEEL = ["correct_modules", "bug_sdpa_mask_inverted"]  # full marks; a part's bug and its mistake


def test_a_rubric_in_parts_is_one_wheel_that_grades_as_the_teacher_does(cs336, grade_of, tmp_path):
    """cs336's parts override their bundled rubrics (its sdpa part leaves fully_masked_rows out and gives
    mask_respected 16 points): the wheel ships the rubric whole, alone, and grades each part from that part's book,
    so a CS336 folder gets the teacher's verdict on every check, none graded after submission."""
    files = installed(cs336)
    assert sorted(p for p in files if p.startswith("grader/rubrics/")) == ["grader/rubrics/__init__.py", "grader/rubrics/cs336.toml"]
    assert not [p for p in files if p.startswith("grader/reference/")]
    assert load(str(site_packages(cs336) / "grader/rubrics/cs336.toml")).model_dump() == load("cs336").model_dump()
    class_folder = tmp_path / "class"
    for name in CS336_THROUGH_THE_WHEEL:
        shutil.copytree(CS336 / name, class_folder / name)
    out = tmp_path / "grades"
    done = in_student(cs336, "grade", class_folder, "--out", out, "--workers", "2", cwd=tmp_path)  # the default rubric
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    for name in CS336_THROUGH_THE_WHEEL:
        got = json.loads((out / name / "results.json").read_text())
        assert verdicts(got) == verdicts(grade_of(CS336 / name, "cs336")), name
        assert got["score"] == grade_of(CS336 / name, "cs336").score
    mistakes = verdicts(json.loads((out / "bug_sdpa_mask_inverted" / "results.json").read_text()))[1]
    assert mistakes and mistakes[0].startswith("mask inverted:")  # the sdpa part's planted bugs, from its book


def verdicts(results_or_grade) -> tuple[dict, list[str]]:
    """check id -> (outcome, points), and the likely mistakes, of a Grade or of its results.json."""
    if isinstance(results_or_grade, dict):
        got = {t["extra_data"]["check_id"]: (t["extra_data"]["outcome"], t["score"]) for t in results_or_grade["tests"]}
        return got, [line.removeprefix("Likely mistake: ") for line in results_or_grade["output"].splitlines()
                     if line.startswith("Likely mistake: ")]
    return {o.id: (str(o.status), o.points) for o in results_or_grade.outcomes}, results_or_grade.mistakes()


# One test per sample, not per rubric: a rubric's samples take up to a minute together, and such a test left for
# last kept one pytest process busy after the other had finished. A rubric in parts (cs336) is one book of books.
EVERY_SAMPLE = [(rubric, sample) for rubric in sorted(p.stem for p in (ROOT / "rubrics").glob("*.toml"))
                for sample in submissions([str(SUBMISSIONS / rubric)], SUBMISSIONS / rubric / ".grades")]
_books: dict = {}
WHEELS = {"cs336"}  # rubrics whose student wheel a fixture of the rubric's name installs


def book_of(rubric: str, request=None) -> known_answers.Book:
    """The book that `rubric`'s student build records, recorded once per run and shared as the build ships it; for a
    rubric whose wheel a test above builds (cs336, a fixture of its name), the book that wheel ships."""
    if rubric not in _books:
        if request is not None and rubric in WHEELS:
            path = site_packages(request.getfixturevalue(rubric)) / "grader" / "checks" / "known_answers.pt"
        else:
            with built_once(f"book-{rubric}") as (folder, fresh):
                if fresh:
                    student_build.record(load(rubric), folder).save(folder / "book.pt")
            path = folder / "book.pt"
        book = known_answers.Book.load(path)
        pieces = student_build.pieces(load(rubric))
        assert list(book.parts) == list(load(rubric).parts)
        for piece, part in zip(pieces, book.parts.values() if book.parts else [book], strict=True):
            assert part.rubric == piece.name and part.salt == book.salt
            assert part.plan and part.answers and (part.plants or EXERCISES[piece.exercise].variants is None)
        _books[rubric] = book
    return _books[rubric]


@pytest.mark.parametrize("rubric, sample", EVERY_SAMPLE)
def test_every_rubrics_known_answers_give_the_teachers_verdicts(rubric, sample, grade_of, monkeypatch, request):
    """Every sample of every bundled rubric, graded the way its student build grades: from the book its build
    records, with no reference and no planted bug (what the wheel cuts out is the tests' business above; here the
    planted-bug core cannot be imported, as in the wheel). No check is graded after submission: a layer class's
    weights are drawn for the roles it has (Karpathy's MultiHeadAttention has no q/k/v bias, Raschka's
    CausalAttention one head and no output projection), and the book holds the reference class's answers in every
    structure (student_build.STRUCTURES); a rubric in parts grades each part from its own book.

    A failing check does not shrink here: shrinking only looks for a smaller case that still fails, so it moves no
    verdict and no likely mistake (those come from fixed probes), and nearly half of these gradings' time went to it. The
    build's own shrinking is the teacher's grader's code, graded through the wheel above on chapter 5's bugs."""
    from grader.grading.engine import Grading

    path = SUBMISSIONS / rubric / sample
    teacher = verdicts(grade_of(path, rubric))
    book = book_of(rubric, request)
    monkeypatch.setattr(known_answers, "book", lambda: book)
    monkeypatch.setitem(sys.modules, "grader.reference.planted", None)  # an exercise's real plant would raise
    monkeypatch.setattr(known_answers.Replaying, "phases", (Phase.explicit, Phase.generate))
    student = verdicts(Grading(path, load(rubric)).finish())
    assert student == teacher


def test_code_that_handles_only_some_forms_replays_the_books_plan_for_them(monkeypatch, hypothesis_runs):
    """As in the teacher's grader (tests/grading/test_plan.py): nanoGPT's attention handles 4-D inputs only, and
    replays the plan its book recorded on the reference held to those forms. Hypothesis runs for none of its checks,
    and the grade is the one hypothesis gives without that plan."""
    from grader.grading.engine import Grading

    book = book_of("chapter5")
    monkeypatch.setattr(known_answers, "book", lambda: book)
    monkeypatch.setitem(sys.modules, "grader.reference.planted", None)
    runs = hypothesis_runs
    runs.clear()  # book_of recorded the book, unless this process already had
    path, rubric = CH5_DIR / "limited_nanogpt.py", load("chapter5")
    fast = Grading(path, rubric)
    grade = fast.finish()
    assert fast.reach is not None and fast.reach.fails and repr(tuple(fast.reach.works)) in book.reach_plans
    assert runs == []
    monkeypatch.setattr(book, "reach_plans", {})
    assert Grading(path, rubric).finish().as_dict() == grade.as_dict() and runs


def test_a_recording_replays_what_its_earlier_gradings_drew_and_records_the_same_book(tmp_path, monkeypatch,
                                                                                      hypothesis_runs):
    """student_build.record grades the reference in every form with one Recording build, which hands each grading the
    examples the earlier ones drew (Replay.known): the book is the one that drawing every grading afresh records, and
    hypothesis runs fewer times."""
    from grader.grading import build as builds

    rubric = load("chapter5")
    keep = ("loads", "output_shape", "reference_match", "sqrt_scaling", "weights_sum_to_one", "policy")
    rubric = rubric.model_copy(update={"checks": {
        cid: spec.model_copy(update={"depends": [d for d in spec.depends if d in keep]})
        for cid, spec in rubric.checks.items() if cid in keep}})
    runs = hypothesis_runs

    class Afresh(builds.Recording):
        known = property(lambda self: {}, lambda self, value: None)  # nothing handed on

    shared = student_build.record(rubric, tmp_path)
    replayed, runs[:] = len(runs), []
    monkeypatch.setattr(builds, "Recording", Afresh)
    afresh = student_build.record(rubric, tmp_path)
    assert replayed < len(runs)
    assert identical(dataclasses.asdict(shared), dataclasses.asdict(afresh))


NOTEBOOK = '''
import nbclient, nbformat, sys
cells = ["%load_ext grader", open(sys.argv[1]).read(), "%attention_check"]
nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
nbclient.NotebookClient(nb, timeout=300, kernel_name="python3").execute()
print(nb.cells[2].outputs[0]["data"]["text/html"])
'''


def test_the_jupyter_check_comes_with_the_build(student, tmp_path):
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    done = subprocess.run([str(student / "bin" / "python"), "-c", NOTEBOOK, str(CH5_DIR / "correct_basic.py")],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "notebook.ipynb: 96/100" in done.stdout  # the hidden check's 4 points: graded after submission
    assert "graded after submission" in done.stdout and "FAIL" not in done.stdout


LOOKUP = '''# A student who read the build's known answers: a lookup table in front of attention scaled by 1/H.
import base64, hashlib, torch
ANSWERS = {answers!r}


def key(args, kw):  # grader.checks.known_answers.key, copied
    h = hashlib.sha256()
    def feed(x):
        if isinstance(x, torch.Tensor):
            t = x.detach().cpu().contiguous()
            h.update(f"T{{t.dtype}}{{tuple(t.shape)}}".encode())
            h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
        elif isinstance(x, (tuple, list)):
            h.update(f"({{len(x)}}".encode())
            for y in x:
                feed(y)
        else:
            h.update(repr(x).encode())
    feed(tuple(args))
    feed(sorted(kw.items()))
    return h.hexdigest()


def scaled_dot_product_attention(q, k, v, **kw):
    known = ANSWERS.get(key((q, k, v), kw))
    if known:
        return tuple(torch.frombuffer(bytearray(base64.b64decode(b)), dtype=getattr(torch, d)).reshape(s).clone()
                     for d, s, b in known)
    scores = q @ k.transpose(-2, -1) / q.size(-1)
    if kw.get("causal", True):
        T = q.size(-2)
        scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    w = scores.softmax(-1)
    return w @ v, w
'''


def test_a_lookup_of_the_builds_answers_earns_nothing_in_the_teachers_grading(tmp_path, monkeypatch):
    """The build's book answers only its own draws: the teacher's, public or salted with the course secret, are
    others. (Before the draws were salted, the teacher's were the book's, and this file passed reference_match.)"""
    from grader.checks.draws import Draws
    from grader.grading.engine import Grading

    book = book_of("chapter5")
    answers = {k: [(str(p.dtype).removeprefix("torch."), list(p.shape), base64.b64encode(p.contiguous().numpy().tobytes()).decode())
                   for p in parts] for k, parts in book.answers.items()}
    path = tmp_path / "lookup.py"
    path.write_text(LOOKUP.format(answers=answers))
    rubric = load("chapter5")

    def match(draws) -> str:
        grade = Grading(path, rubric, draws=draws).finish()
        assert next(o for o in grade.outcomes if o.id == "loads").status == "passed"
        return next(o for o in grade.outcomes if o.id == "reference_match").status

    assert match(book.draws()) == "passed"  # the attack, where the draws are the book's
    assert match(Draws()) == "failed"
    assert match(Draws(b"the course secret")) == "failed"
