"""Build what a class grades with: `bundle gradescope` (Gradescope's autograder.zip), `bundle prairielearn` (a
folder for a PrairieLearn course: Dockerfile, scripts, rubric, an example question), `bundle classroom` (a GitHub
Classroom template repository) or `bundle student` (a wheel of the self-check for one rubric, without the
reference, the planted bugs or the hidden checks).

Exit status 0 with the path written, 2 on a bad rubric or an output that cannot be written.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from grader.frontends import options


def add_arguments(p) -> None:
    kinds = p.add_subparsers(dest="kind", required=True, metavar="{gradescope,prairielearn,classroom,student}",
                             parser_class=type(p))
    g = kinds.add_parser("gradescope", help="autograder.zip for a Gradescope programming assignment",
                         description="autograder.zip: setup.sh, run_autograder, the rubric and the grader's wheel")
    options.add_rubric(g.add_argument)
    g.add_argument("-o", "--output", default="autograder.zip", metavar="ZIP", help="where to write it (default: autograder.zip)")
    g.add_argument("--secret-file", metavar="FILE", help="the course secret (docs/trust.md), carried inside the zip, "
                                                          "which only the course's staff can read")
    pl = kinds.add_parser("prairielearn", help="a folder for PrairieLearn's external grading (docs/prairielearn.md)",
                          description="Dockerfile, setup.sh, grade.sh (the entrypoint), the rubric, the grader's wheel "
                                      "and question/info.json + question.html for a question graded by them")
    options.add_rubric(pl.add_argument)
    pl.add_argument("-o", "--output", default="prairielearn", metavar="DIR", help="folder to write (default: prairielearn)")
    c = kinds.add_parser("classroom", help="a GitHub Classroom template repository (docs/classroom.md)",
                         description="template/ (the workflow, one autograding step per check, the student build of "
                                     "the grader, a README for students) and README.md for the teacher")
    options.add_rubric(c.add_argument)
    c.add_argument("-o", "--output", default="classroom", metavar="DIR", help="folder to write (default: classroom)")
    s = kinds.add_parser("student", help="a wheel of the self-check for students, without the solution",
                         description="an installable wheel: `attention-grader check` and the Jupyter check for one "
                                     "rubric, with known answers in place of the reference")
    options.add_rubric(s.add_argument)
    s.add_argument("-o", "--output", default="dist", metavar="DIR", help="folder for the wheel (default: dist)")


def _rubric_file(name_or_path: str):
    """(the rubric, the TOML file it was read from), or None after a one-line error."""
    from grader.grading.rubric import RubricError, _locate, load

    try:
        return load(name_or_path), _locate(name_or_path)
    except RubricError as e:
        print(f"attention-grader: {e}", file=sys.stderr)
        return None


def run(args) -> int:
    from grader.checks import known_answers

    if known_answers.FILE.is_file():  # its reference is not here to bundle
        print("attention-grader: bundle: this is a student build; bundle from the teacher's grader", file=sys.stderr)
        return 2
    found = _rubric_file(args.rubric)
    if found is None:
        return 2
    rubric, path = found
    from grader.checks.draws import SecretError
    from grader.frontends.student_build import BuildError
    try:
        with tempfile.TemporaryDirectory(prefix="attention-grader-bundle-") as tmp:
            if args.kind == "gradescope":
                from grader.frontends import autograder

                secret = Path(args.secret_file).read_bytes() if args.secret_file else None
                written = autograder.build(path, Path(args.output), build_dir=Path(tmp), secret=secret)
            elif args.kind in ("prairielearn", "classroom"):
                from grader.frontends import classroom, prairielearn

                platform = prairielearn if args.kind == "prairielearn" else classroom
                written = platform.build(rubric, path, Path(args.output), build_dir=Path(tmp))
            else:
                from grader.frontends import student_build

                written = student_build.build(rubric, path, Path(args.output))
    except OSError as e:
        print(f"attention-grader: {e.filename or args.output}: {e.strerror or e}", file=sys.stderr)
        return 2
    except (BuildError, SecretError) as e:
        print(f"attention-grader: {e}", file=sys.stderr)
        return 2
    print(written)
    return 0
