"""PrairieLearn external grading: `bundle prairielearn` writes the folder a course needs, and its grade.sh runs
`python -m grader.frontends.prairielearn grade` for every submission.

What PrairieLearn does, from its docs (docs/externalGrading.md) and its grader host (apps/grader-host/src/index.ts,
both in PrairieLearn/PrairieLearn): a question's info.json names a Docker image and an entrypoint
(`externalGradingOptions`: image, entrypoint, serverFilesCourse, timeout in seconds, default 30, at most 600,
enableNetworking, default off, environment). Each job's files are bind-mounted over /grade (`Binds:
[tempDir:/grade]`): the student's files in /grade/student, the question's tests/ in /grade/tests, the listed
serverFilesCourse entries in /grade/serverFilesCourse; the entrypoint runs as the image's user (root here) and must
leave /grade/results/results.json (a folder it creates itself) and exit 0, or the job counts as failed. Because
/grade is mounted over, nothing the image keeps can live there: the venv is /attention-grader/venv.

The folder: `Dockerfile` (a slim Python of the teacher's version running `setup.sh`), `setup.sh` (the venv at
$PL_VENV: the pinned CPU torch, the rubric's packages, this grader from the wheel beside it), `grade.sh` (the
entrypoint; the root from $GRADE_ROOT, default /grade, so a test can stand a folder in for it), `rubric.toml`,
the wheel, and `question/info.json` + `question/question.html` for a question that uses it.

The course secret stays out of the image (images on Docker Hub are public): grade.sh points
ATTENTION_GRADER_SECRET_FILE at /grade/serverFilesCourse/attention-grader/secret when the course has one there
(students never see serverFilesCourse), and makes it readable by root alone before any student code runs.

Grading is `Grading` as `attention-grader check` grades, written as PrairieLearn's results.json
(reports.prairielearn); a bad rubric, a sandbox wall that does not go up or a crash of the grader give
`gradable: false` with the reason, and `ensure` leaves such a file when the grader left none at all.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
import uuid
from pathlib import Path

from grader.frontends import options, platforms, wheel

APP = "/attention-grader"  # where the image keeps the scripts, the rubric and the venv
VENV = f"{APP}/venv"
SECRET = "serverFilesCourse/attention-grader/secret"  # under the job's root
RUBRIC = "rubric.toml"
TIMEOUT_MAX = 600  # PrairieLearn: "This value cannot exceed 600 seconds (10 minutes)"
COULD_NOT = "The grader could not grade this submission; nothing was counted. Please tell your teacher."

DOCKERFILE = """\
# The image PrairieLearn grades {rubric} questions in (written by attention-grader bundle prairielearn).
# Build it and push it to Docker Hub, then name it as "image" in the question's info.json:
#   docker build -t YOUR_NAME/attention-grader-{rubric} . && docker push YOUR_NAME/attention-grader-{rubric}
# The course secret does not belong here: an image on Docker Hub is public (see grade.sh).
FROM python:{python}-slim
COPY setup.sh grade.sh {rubric_file} {wheel} {app}/
RUN chmod 755 {app}/setup.sh {app}/grade.sh && {app}/setup.sh
"""

SETUP = """\
#!/usr/bin/env bash
# Builds the grading image's venv; the Dockerfile runs it once (written by attention-grader bundle prairielearn).
# The venv cannot live under /grade: PrairieLearn mounts each job's files over /grade.
set -euo pipefail
HERE="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"
VENV="${{PL_VENV:-{venv}}}"
PYTHON="${{PL_PYTHON:-python3}}"
TORCH_INDEX_URL="${{TORCH_INDEX_URL-{torch_index}}}"  # set it empty to take torch from pip's own configuration
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet ${{TORCH_INDEX_URL:+--index-url "$TORCH_INDEX_URL"}} "torch=={torch}"
{packages}"$VENV/bin/python" -m pip install --quiet "torch=={torch}" "$HERE/{wheel}"
"$VENV/bin/python" -c "import grader.frontends.prairielearn"  # fail the build here, not at the first submission
"""

PACKAGES = """\
"$VENV/bin/python" -m pip install --quiet "torch=={torch}" {packages}  # the rubric's packages, torch kept at the pin
"""

GRADE = """\
#!/usr/bin/env bash
# PrairieLearn runs this for every submission, as root, in a container of the image (written by attention-grader
# bundle prairielearn). It grades $GRADE_ROOT/student, leaves $GRADE_ROOT/results/results.json and exits 0: a
# non-zero exit would make PrairieLearn discard the results. Options given to it (--notebook-mode ...) go to
# the grader.
set -uo pipefail
HERE="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"
ROOT="${{GRADE_ROOT:-/grade}}"
VENV="${{PL_VENV:-{venv}}}"
RESULTS="$ROOT/results/results.json"
RUBRIC="$HERE/{rubric_file}"
if [ -f "$ROOT/tests/{rubric_file}" ]; then RUBRIC="$ROOT/tests/{rubric_file}"; fi  # a question's own rubric
mkdir -p "$ROOT/results" "$ROOT/student"
chmod 755 "$ROOT/results"  # written by root alone
rm -f "$RESULTS"
# The course secret: a file in the course's serverFilesCourse, which students never see; readable by root alone
# from here on, so that no worker (each runs under a uid of its own) can read it either.
SECRET="$ROOT/{secret}"
if [ -z "${{ATTENTION_GRADER_SECRET-}}${{ATTENTION_GRADER_SECRET_FILE-}}" ] && [ -f "$SECRET" ]; then
    chmod 600 "$SECRET"
    chmod 700 "$(dirname "$SECRET")"
    export ATTENTION_GRADER_SECRET_FILE="$SECRET"
fi
WORK="$(mktemp -d)"  # the grader's working folder: nothing of the student's
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
"$VENV/bin/python" -m grader.frontends.prairielearn grade "$ROOT/student" --rubric "$RUBRIC" --results "$RESULTS" \\
    "$@" 2>&1 | tee "$WORK/grade.log"
"$VENV/bin/python" -m grader.frontends.prairielearn ensure "$RESULTS" "$WORK/grade.log"
if [ ! -s "$RESULTS" ]; then  # not even Python could start
    printf '%s\\n' '{last_ditch}' > "$RESULTS"
fi
exit 0
"""

QUESTION = """\
<!-- A question graded by attention-grader with rubric {rubric} (written by attention-grader bundle prairielearn).
     Students write one file; the grader finds the function in it. To let them upload a .py or a notebook
     instead, replace the editor with: <pl-file-upload file-names="attention.py"></pl-file-upload> -->
<pl-question-panel>
  <p>{title}</p>
  <p>Write <code>{entry}</code>, taking <code>{inputs}</code>{also}.</p>
  <pl-file-editor file-name="attention.py" ace-mode="ace/mode/python"></pl-file-editor>
</pl-question-panel>

<pl-submission-panel>
  <pl-external-grader-results></pl-external-grader-results>
  <pl-file-preview></pl-file-preview>
</pl-submission-panel>
"""

README = """\
# {rubric} on PrairieLearn (written by attention-grader bundle prairielearn)

1. Build the image and push it to Docker Hub: `docker build -t YOUR_NAME/attention-grader-{rubric} .` then
   `docker push YOUR_NAME/attention-grader-{rubric}`; sync it in PrairieLearn (Sync, Docker images).
2. Copy `question/` to `questions/<your-question>/` in the course repository and put your Docker Hub name in its
   `info.json` ("image").
3. The course secret (recommended): put it in `serverFilesCourse/attention-grader/secret` in the course
   repository. Never put it in the image. Without one, delete "serverFilesCourse" from `info.json`.
4. Commit, push and sync the course; open the question as a student and submit a file.
5. To change the rubric without rebuilding the image, put the new one in the question as `tests/rubric.toml`
   (its packages must already be in the image).

`info.json` gives the job {timeout} s (the rubric's limits: {seconds} s; PrairieLearn allows at most {max} s), no
network, and ATTENTION_GRADER_ALLOW_WEAK_WALLS=1: a PrairieLearn container cannot make namespaces, so the sandbox
grades with a uid per worker, rlimits, Landlock and seccomp, and the report says WEAK WALLS.
"""


def timeout(rubric) -> int:
    return min(TIMEOUT_MAX, platforms.seconds(rubric))


def info_json(rubric) -> dict:
    """A question's info.json (PrairieLearn's infoQuestion schema) graded by the image."""
    return {
        "uuid": str(uuid.uuid4()),
        "title": rubric.title or rubric.name,
        "topic": "Attention",
        "tags": ["attention-grader"],
        "type": "v3",
        "singleVariant": True,
        "gradingMethod": "External",
        "externalGradingOptions": {
            "comment": "written by attention-grader bundle prairielearn: put your Docker Hub image below; "
                       "timeout from the rubric's limits; a PrairieLearn container cannot make namespaces, "
                       "so the sandbox grades with weak walls (uid, rlimits, Landlock, seccomp)",
            "enabled": True,
            "image": f"YOUR_NAME/attention-grader-{rubric.name}",
            "entrypoint": f"{APP}/grade.sh",
            "serverFilesCourse": ["attention-grader/"],
            "timeout": timeout(rubric),
            "enableNetworking": False,
            "environment": {"ATTENTION_GRADER_ALLOW_WEAK_WALLS": "1"},
        },
    }


def question_html(rubric) -> str:
    from grader.exercises import EXERCISES

    names = rubric.names
    also = f" (also accepted: {', '.join(f'<code>{n}</code>' for n in names[1:])})" if len(names) > 1 else ""
    return QUESTION.format(rubric=rubric.name, title=rubric.title or rubric.name, entry=names[0],
                           inputs=", ".join(EXERCISES[rubric.exercise].inputs), also=also)


def setup_script(rubric, wheel_name: str) -> str:
    torch = platforms.torch_pin()
    extra = platforms.packages(rubric)
    return SETUP.format(venv=VENV, torch_index=platforms.TORCH_INDEX, torch=torch, wheel=wheel_name,
                        packages=PACKAGES.format(torch=torch, packages=platforms.pip_args(extra)) if extra else "")


def build(rubric, rubric_file: Path, out: Path, *, build_dir: Path) -> Path:
    """The folder for a PrairieLearn course; returns it."""
    from grader.reports.prairielearn import not_gradable

    whl = wheel.write(build_dir, wheel.package_files())
    last_ditch = json.dumps(not_gradable(COULD_NOT), sort_keys=True)  # inside '...' in grade.sh
    assert "'" not in last_ditch
    files: dict[str, str | bytes] = {
        "Dockerfile": DOCKERFILE.format(rubric=rubric.name, python=platforms.python_version(), rubric_file=RUBRIC,
                                        wheel=whl.name, app=APP),
        "setup.sh": setup_script(rubric, whl.name),
        "grade.sh": GRADE.format(venv=VENV, rubric_file=RUBRIC, secret=SECRET, last_ditch=last_ditch),
        RUBRIC: rubric_file.read_text(encoding="utf-8"),
        whl.name: whl.read_bytes(),
        "question/info.json": json.dumps(info_json(rubric), indent=2) + "\n",
        "question/question.html": question_html(rubric),
        "README.md": README.format(rubric=rubric.name, timeout=timeout(rubric), seconds=platforms.seconds(rubric),
                                   max=TIMEOUT_MAX),
    }
    platforms.write_folder(out, files, executable=("setup.sh", "grade.sh"))
    return out


# -- at run time, in PrairieLearn's container ------------------------------------------------------------------
def grade(args) -> dict:
    """PrairieLearn's results for the submission at args.path, graded as `attention-grader check` grades it."""
    from grader.reports.prairielearn import not_gradable, prairielearn

    try:
        _, graded = platforms.graded(args)
    except platforms.CannotGrade as e:
        return not_gradable(f"{COULD_NOT} ({e})")
    return prairielearn(graded)


def ensure(results: Path, log: Path) -> bool:
    """Leave valid results: the grader's own, or `gradable: false` with the log's last lines for the teacher.
    True when the grader's were there."""
    from grader.reports.prairielearn import not_gradable, valid, write_json

    if valid(results):
        return True
    try:
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-20:]
    except OSError:
        tail = []
    write_json(results, not_gradable(COULD_NOT, "\n".join(tail)))
    return False


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m grader.frontends.prairielearn", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="grade a submission into PrairieLearn's results.json")
    g.add_argument("path", help="the student's folder (/grade/student)")
    g.add_argument("--results", required=True, metavar="FILE", help="where to write results.json")
    options.add_submission_options(g.add_argument)
    e = sub.add_parser("ensure", help="leave a valid results.json when grading left none")
    e.add_argument("results")
    e.add_argument("log")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    if args.command == "ensure":
        ensure(Path(args.results), Path(args.log))
        return 0  # PrairieLearn shows results.json only after an exit status of 0
    from grader.reports.prairielearn import not_gradable, write_json

    try:
        results = grade(args)
    except Exception:  # noqa: BLE001 - a bug of ours: the student is not charged an attempt, the teacher gets the traceback
        results = not_gradable(COULD_NOT, traceback.format_exc()[-4000:])
    write_json(args.results, results)
    print(results["message"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
