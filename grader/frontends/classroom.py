"""GitHub Classroom autograding: `bundle classroom` writes a template repository whose workflow grades every
push, and each of its steps runs `python -m grader.frontends.classroom CHECK`.

What GitHub Classroom does, from its actions (classroom-resources/autograding-command-grader and
autograding-grading-reporter, action.yml and src/main.js): a workflow in the student's own repository runs on
each push. A command grader step (inputs `test-name`, `setup-command`, `command`, `timeout` in minutes, `max-score`)
runs `command` in a shell with only PATH, HOME and a few variables of its own in the environment, and awards
`max-score` (read with parseInt: whole points only) when it exits 0; its output `result` is base64 JSON. The
reporter step (input `runners`: the step ids, comma-separated) reads each from the environment variable
`<ID>_RESULTS` (the id in capitals) and reports the sum to Classroom.

So each check the student build can grade gets one step with its points. The student build (`bundle student`) is
what the repository holds: no reference solution, no planted bug, no hidden check's code, since the student owns
the repository and everything in it. The first step grades the whole submission once and keeps the verdicts in
~/.cache/attention-grader (keyed by the submission's code, the rubric and the grader); every other step reads
its check's verdict from there, so a push costs one grading, not one per check.

No course secret can be kept from a student here: the workflow, its logs and the grader run in their repository,
so the examples a push is checked on are public (the student build's book holds them). They are never those of the
final grading: a student build draws its own (checks.draws). Grade for the record elsewhere, or with
`attention-grader grade` under the secret.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from importlib import metadata, resources
from pathlib import Path

VENV = "$HOME/.attention-grader/venv"  # outside the checkout: the grader must find no torch among the student's files
WHEELS = ".github/attention-grader"
WORKFLOW = ".github/workflows/classroom.yml"
CACHE = "attention-grader/classroom"  # under ~/.cache (XDG_CACHE_HOME)
COMMAND_GRADER = "classroom-resources/autograding-command-grader@v1"
REPORTER = "classroom-resources/autograding-grading-reporter@v1"


# -- the bundle ------------------------------------------------------------------------------------------------
def steps(rubric) -> list[str]:
    """The checks a Classroom step can grade: visible ones that depend on no hidden one (in a student build those
    are "graded after submission"), in the rubric's order."""
    hidden = {cid for cid, spec in rubric.checks.items() if spec.visibility != "visible"}

    def open_(cid: str) -> bool:
        return cid not in hidden and all(open_(d) for d in rubric.checks[cid].depends)

    return [cid for cid in rubric.order() if open_(cid)]


def step_id(cid: str) -> str:
    """A check's step id: a rubric in parts' "part.check" with "__" for the dot (a step id is letters, digits, - and
    _, and the reporter reads the <ID>_RESULTS variable)."""
    return cid.replace(".", "__")


def title(rubric, cid: str) -> str:
    """A check's title, a part's check's prefixed by its part (as a grade words it)."""
    from grader.exercises import EXERCISES
    from grader.grading.builtin import BUILTIN  # loads and policy

    name, _, inner = cid.partition(".") if rubric.parts else ("", "", cid)
    piece = rubric.parts[name] if name else rubric
    found = {**BUILTIN, **EXERCISES[piece.exercise].catalogue}[inner].title
    return f"{name}: {found}" if name else found


def _q(value) -> str:
    """A YAML scalar: JSON's double-quoted strings and numbers are YAML's too."""
    return json.dumps(value)


def workflow(rubric, wheel_name: str) -> str:
    """.github/workflows/classroom.yml: the setup, one command grader step per check, the reporter."""
    from grader.frontends import platforms

    python = f'"{VENV}/bin/python"'
    pin = f'"torch=={platforms.torch_pin()}"'
    setup = [f'python -m venv "{VENV}"',
             f"{python} -m pip install --quiet --index-url {platforms.TORCH_INDEX} {pin}"]
    if platforms.packages(rubric):
        setup.append(f"{python} -m pip install --quiet {pin} {platforms.pip_args(platforms.packages(rubric))}")
    setup.append(f"{python} -m pip install --quiet {pin} {WHEELS}/{wheel_name}")
    ids = steps(rubric)
    lines = [
        f"# Written by attention-grader bundle classroom for rubric {rubric.name}: one autograding step per check,",
        "# its points as max-score (GitHub Classroom adds them up). The grader here is the student build: no",
        "# reference solution, no hidden check, no course secret: students own this repository, and every",
        "# example a push is checked on is public.",
        "name: Autograding Tests",
        '"on":',
        "- push",
        "- repository_dispatch",
        "permissions:",
        "  checks: write",
        "  actions: read",
        "  contents: read",
        "jobs:",
        "  run-autograding-tests:",
        "    runs-on: ubuntu-latest",
        "    if: github.actor != 'github-classroom[bot]'",
        "    steps:",
        "    - name: Checkout code",
        "      uses: actions/checkout@v4",
        "    - name: Set up Python",
        "      uses: actions/setup-python@v5",
        "      with:",
        f"        python-version: {_q(platforms.python_version())}",
        "    - name: Install the grader",
        "      run: |",
        *[f"        {line}" for line in setup],
    ]
    for cid in ids:
        spec = rubric.checks[cid]
        named = f"{cid}: {title(rubric, cid)}"
        lines += [
            f"    - name: {_q(named)}",
            f"      id: {step_id(cid)}",
            f"      uses: {COMMAND_GRADER}",
            "      with:",
            f"        test-name: {_q(named)}",
            f"        command: {_q(f'{python} -m grader.frontends.classroom {cid} --rubric {rubric.name}')}",
            f"        timeout: {platforms.minutes(rubric)}",
            f"        max-score: {int(spec.points)}",
        ]
    lines += ["    - name: Autograding Reporter", f"      uses: {REPORTER}", "      env:"]
    lines += [f"        {step_id(cid).upper()}_RESULTS: {_q('${{steps.' + step_id(cid) + '.outputs.result}}')}" for cid in ids]
    lines += ["      with:", f"        runners: {','.join(map(step_id, ids))}"]
    return "\n".join(lines) + "\n"


TEACHER = """\
# {rubric} on GitHub Classroom (written by attention-grader bundle classroom)

1. Create a repository for the assignment and copy everything in `template/` into it, hidden folders included
   (`cp -r template/. my-assignment/`): `.github/workflows/classroom.yml`, the grader in `.github/attention-grader/`
   and a README for students.
2. Add your starter code (a file defining `{entry}`), commit and push.
3. In the repository's settings, tick "Template repository".
4. In GitHub Classroom, create an assignment from that template and add no tests in its autograding form:
   Classroom writes the tests added there into `.github/workflows/classroom.yml`, the file this bundle wrote
   ({steps} checks, {points} points). List `.github/**` under its protected file paths.
5. Students accept the assignment; every push runs the checks, and the Actions tab shows each one's feedback.

What Classroom cannot keep from students: the workflow, its logs and the grader run in their own repository, so
no course secret can be kept there. The examples a push is checked on are public (they ship in the grader's book,
as in `bundle student`; never those of your final grading), and a student could change the workflow. Use it for
feedback while they work; grade for the record on another platform or with `attention-grader grade` under the
course secret. Graded after submission, not here: {later}.
"""

STUDENT = """\
# {title}

Write `{entry}` in a `.py` file (or a notebook) in this repository. Every push runs the checks of
rubric `{rubric}`: the Actions tab shows each check's verdict, counterexample and hint. To run them
on your own machine:

    pip install --index-url {torch_index} "torch=={torch}"
    pip install {wheel}
    attention-grader check .
"""


def build(rubric, rubric_file: Path, out: Path, *, build_dir: Path) -> Path:
    """The folder: README.md for the teacher and template/, the template repository's files; returns it."""
    from grader.frontends import platforms, student_build

    fractional = [cid for cid, spec in rubric.checks.items() if spec.points != int(spec.points)]
    if fractional:
        raise student_build.BuildError(
            f"rubric {rubric.name}: GitHub Classroom counts whole points only (the command grader reads max-score "
            f"with parseInt), and {', '.join(fractional)} {'has' if len(fractional) == 1 else 'have'} a fraction")
    whl = student_build.build(rubric, rubric_file, build_dir)
    ids = steps(rubric)
    entry = "`, `".join(p.names[0] for p in student_build.pieces(rubric))  # each part's function, in a rubric in parts
    later = [cid for cid in rubric.order() if cid not in ids]
    files: dict[str, str | bytes] = {
        "README.md": TEACHER.format(rubric=rubric.name, entry=entry, steps=len(ids),
                                    points=f"{sum(int(rubric.checks[c].points) for c in ids)} of {int(rubric.max_score)}",
                                    later=", ".join(later) or "nothing"),
        f"template/{WORKFLOW}": workflow(rubric, whl.name),
        f"template/{WHEELS}/{whl.name}": whl.read_bytes(),
        "template/README.md": STUDENT.format(title=rubric.title or rubric.name, entry=entry, rubric=rubric.name,
                                             torch_index=platforms.TORCH_INDEX, torch=platforms.torch_pin(),
                                             wheel=f"{WHEELS}/{whl.name}"),
    }
    platforms.write_folder(out, files)
    return out


# -- at run time, in a step of the workflow ---------------------------------------------------------------------
def _rubric_bytes(name_or_path: str) -> bytes:
    """The rubric's TOML as grading will read it (grading.rubric._locate, without importing torch), or the name."""
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.exists():
        return path.read_bytes() if path.is_file() else name_or_path.encode()
    bundled = resources.files("grader.rubrics").joinpath(f"{name_or_path}.toml")
    return bundled.read_bytes() if bundled.is_file() else name_or_path.encode()


def _code_digest(path: Path) -> str:
    """Every .py and .ipynb file under `path` (more than the grader reads: a change to any is a new grading) and
    every link's target, by relative path; no link is followed."""
    h = hashlib.sha256()
    entries = [path] if not path.is_dir() or path.is_symlink() else []
    for root, dirs, files in os.walk(path):  # links to folders stay in dirs, unwalked
        dirs[:] = sorted(d for d in dirs if d != ".git")  # git's own files: never code a submission imports
        entries += [Path(root) / n for n in sorted(files) + [d for d in dirs if os.path.islink(os.path.join(root, d))]]
    for p in entries:
        rel = p.relative_to(path).as_posix() if p != path else p.name
        if p.is_symlink():
            h.update(f"link {rel} {os.readlink(p)}\n".encode())
        elif p.suffix in (".py", ".ipynb") and p.is_file():
            data = p.read_bytes()
            h.update(f"file {rel} {len(data)}\n".encode() + data)
    return h.hexdigest()


def _key(args) -> str:
    reading = sorted((k, str(v)) for k, v in vars(args).items() if k not in ("check", "path", "rubric", "cache"))
    h = hashlib.sha256()
    for part in (metadata.version("attention-grader"), _rubric_bytes(args.rubric), repr(reading),
                 str(Path(args.path).resolve()), _code_digest(Path(args.path))):
        h.update(part if isinstance(part, bytes) else part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def _grade(args) -> dict:
    """The whole submission's verdicts, as the steps show them."""
    from grader.frontends import platforms

    try:
        return steps_verdicts(*platforms.graded(args))
    except platforms.CannotGrade as e:
        return {"error": str(e)}


def steps_verdicts(rubric, grade) -> dict:
    """Each check's verdict as its step gives it (JSON, for the steps after the first): passed only when the check
    passed and the policy did not cost the submission every point."""
    from grader.grading.builtin import POLICY
    from grader.grading.outcome import Status
    from grader.reports.text import feedback, points

    mistakes = grade.mistakes()
    policy = grade.outcomes[-1] if grade.outcomes and grade.outcomes[-1].check == POLICY else None
    zeroed = policy is not None and policy.status is Status.FAILED and rubric.policy.on_violation == "zero"
    return {
        "checks": {o.id: {"title": o.title, "status": str(o.status), "points": points(o.max_points),
                          "passed": o.status is Status.PASSED and not zeroed, "text": feedback(o, mistakes)}
                   for o in grade.outcomes},
        "total": f"{points(grade.score)}/{points(grade.max_score)}",
        "later": [o.id for o in grade.outcomes if o.status is Status.LATER],
        "zeroed": rubric.policy.message if zeroed else "",
    }


def verdicts(args) -> dict:
    """_grade's verdicts, from the cache when this submission was graded already."""
    cache = Path(args.cache or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / CACHE)
    found = cache / f"{_key(args)}.json"
    try:
        return json.loads(found.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        pass
    data = _grade(args)
    try:
        cache.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache, prefix=".grade-")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f)
        os.replace(tmp, found)
    except OSError:
        pass  # no cache: every step grades
    return data


def parser() -> argparse.ArgumentParser:
    from grader.frontends import options

    p = argparse.ArgumentParser(prog="python -m grader.frontends.classroom",
                                description="Grade one check of a submission; exit status 0 when it passes.")
    p.add_argument("check", help="the check's id")
    p.add_argument("path", nargs="?", default=".", help="the submission (default: this folder)")
    p.add_argument("--cache", metavar="DIR", help=f"where the verdicts are kept between steps (default: ~/.cache/{CACHE})")
    options.add_submission_options(p.add_argument)
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    data = verdicts(args)
    if "error" in data:
        print(f"attention-grader: {data['error']}", file=sys.stderr)
        return 2
    if args.check not in data["checks"]:
        print(f"attention-grader: no check {args.check!r} in rubric {args.rubric} (checks: {', '.join(data['checks'])})",
              file=sys.stderr)
        return 2
    c = data["checks"][args.check]
    print(f"{args.check} ({c['points']} points): {'PASS' if c['passed'] else c['status'].upper()}: {c['title']}")
    if c["text"] != c["status"]:
        print(c["text"])
    if data["zeroed"]:
        print(f"No points for any check: {data['zeroed']}")
    later = f"; graded after submission: {', '.join(data['later'])}" if data["later"] else ""
    print(f"This push: {data['total']} points{later}")
    return 0 if c["passed"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
