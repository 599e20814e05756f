"""The Gradescope autograder: a zip with `setup.sh`, `run_autograder`, the rubric and a wheel of this grader
(reference included), so that Gradescope needs no source checkout.

On Gradescope the zip unpacks into /autograder/source; `setup.sh` runs once, as root, when the image is built;
`run_autograder` runs per submission and must leave /autograder/results/results.json. Both take the root from
AUTOGRADER_ROOT (default /autograder), so a test can stand a temporary folder in for it. run_autograder grades
the whole /autograder/submission folder: the loader picks the file that defines the entry point, as for a folder
handed to `grade`. The grading is `pytest --submission ... --grade-json`, so results.json is that command's.

`python -m grader.frontends.autograder ensure RESULTS LOG` runs after it: when pytest left no valid results.json
(it crashed, the grader could not start), it writes one that says so with 0 points, never an empty run.
"""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

from grader.frontends import wheel

TORCH_INDEX = "https://download.pytorch.org/whl/cpu"  # the CPU builds: PyPI's Linux torch is the CUDA one (GBs)

SETUP = """\
#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (written by attention-grader bundle).
set -euo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
VENV="${{AUTOGRADER_VENV:-$ROOT/venv}}"
PYTHON="${{AUTOGRADER_PYTHON:-python3}}"
TORCH_INDEX_URL="${{TORCH_INDEX_URL-{torch_index}}}"  # set it empty to take torch from pip's own configuration
if ! "$PYTHON" -c "import ensurepip, venv" 2>/dev/null && command -v apt-get >/dev/null; then
    apt-get install -y python3 python3-venv python3-pip  # Gradescope's Ubuntu images may lack venv
fi
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet ${{TORCH_INDEX_URL:+--index-url "$TORCH_INDEX_URL"}} "torch=={torch}"
"$VENV/bin/python" -m pip install --quiet "$ROOT/source/{wheel}"
"$VENV/bin/python" -c "import grader.frontends.autograder"  # fail the build here, not at the first submission
"""

RUN = """\
#!/usr/bin/env bash
# Gradescope runs this for every submission; it must leave results/results.json (written by attention-grader bundle).
set -uo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
VENV="${{AUTOGRADER_VENV:-$ROOT/venv}}"
RESULTS="$ROOT/results/results.json"
mkdir -p "$ROOT/results"
rm -f "$RESULTS"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
if [ -f "$ROOT/source/{secret}" ]; then export ATTENTION_GRADER_SECRET_FILE="$ROOT/source/{secret}"; fi
# pytest's configuration pinned here, whatever the submission holds: no ini file, no conftest.py
"$VENV/bin/python" -m pytest -c /dev/null --rootdir "$WORK" --noconftest -p no:cacheprovider -q \\
    --submission "$ROOT/submission" --rubric "$ROOT/source/{rubric}" --grade-json "$RESULTS" 2>&1 | tee "$WORK/pytest.log"
"$VENV/bin/python" -m grader.frontends.autograder ensure "$RESULTS" "$WORK/pytest.log"
"""

RUBRIC = "rubric.toml"
SECRET = "secret"  # the course secret, when the teacher bundles one (checks.draws)


def torch_pin() -> str:
    """The torch the teacher grades with, without its local label (2.13.0+cpu -> 2.13.0)."""
    from importlib import metadata

    return metadata.version("torch").split("+")[0]


def build(rubric_file: Path, out: Path, *, build_dir: Path, secret: bytes | None = None) -> Path:
    """autograder.zip: the scripts, the rubric's TOML and the grader's wheel (with its reference), and the course
    secret when given (only staff can download an autograder; the walls keep workers from the file)."""
    from grader.grading import rubric as rubrics

    whl = wheel.write(build_dir, wheel.package_files(), requires=rubrics.load(str(rubric_file)).packages)
    entries = {
        "setup.sh": SETUP.format(torch_index=TORCH_INDEX, torch=torch_pin(), wheel=whl.name),
        "run_autograder": RUN.format(rubric=RUBRIC, secret=SECRET),
        RUBRIC: rubric_file.read_text(encoding="utf-8"),
    }
    if secret is not None:
        entries[SECRET] = secret.decode("utf-8")
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in entries.items():
            info = zipfile.ZipInfo(name, wheel._EPOCH)
            info.external_attr = {RUBRIC: 0o644, SECRET: 0o600}.get(name, 0o755) << 16  # the scripts run as given
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, text)
        info = zipfile.ZipInfo(whl.name, wheel._EPOCH)
        info.external_attr = 0o644 << 16
        z.writestr(info, whl.read_bytes())
    return out


# -- at run time, on Gradescope -------------------------------------------------------------------------------
def _valid(path: Path) -> bool:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and isinstance(data.get("tests"), list) and isinstance(data.get("score"), (int, float))


def ensure(results: Path, log: Path) -> bool:
    """Leave a valid results.json: the grader's own, or one saying that grading did not run (0 points, the log's
    last lines for the teacher). True when the grader's was there."""
    if _valid(results):
        return True
    try:
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-20:]
    except OSError:
        tail = []
    output = "The autograder could not grade this submission; please tell your teacher.\n" + "\n".join(tail)
    results.parent.mkdir(parents=True, exist_ok=True)
    results.write_text(json.dumps({"score": 0.0, "output": output, "tests": []}, indent=2, sort_keys=True) + "\n")
    return False


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] != "ensure":
        print("usage: python -m grader.frontends.autograder ensure RESULTS LOG", file=sys.stderr)
        return 2
    ensure(Path(argv[1]), Path(argv[2]))
    return 0  # Gradescope shows results.json either way; a failing script would only hide it


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
