"""`attention-grader check` and `replay`, driven as a student would: exit status, what the screen says, the replay
line, colour, bad input, and the feedback files."""

import base64
import json
import os
import pty
import re
import runpy
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CH5_DIR as CH5, ROOT, SUBMISSIONS

from grader.exercises import EXERCISES
from grader.frontends import check as selfcheck
from grader.frontends.cli import main
from grader.reports import text as report
from grader.reports.gradescope import gradescope

CATALOGUE = EXERCISES["chapter5"].catalogue

CLI = str(Path(sys.executable).with_name("attention-grader"))
SCREEN = 40


def check(capsys, *args):
    code = main(["check", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_correct_file_exits_0(capsys):
    code, out, _ = check(capsys, CH5 / "correct_basic.py")
    assert code == 0
    assert out.splitlines()[0] == "correct_basic.py: 100/100, 17 of 17 checks passed: ready to hand in"
    assert "FAIL" not in out and "Likely mistake" not in out


def test_zero_fill_names_the_check_the_case_and_the_fix(capsys, tmp_path):
    code, out, _ = check(capsys, CH5 / "bug_zero_fill.py", "--feedback", tmp_path)
    assert code == 1
    assert len(out.splitlines()) <= SCREEN
    assert "FAIL mask_fill_value (0/8)" in out
    assert "weights[0, 0, 1] = 1, expected 0" in out  # a concrete position and concrete numbers
    assert "Likely mistake: zero fill" in out and "float('-inf')" in out
    assert "Replay: attention-grader replay" in out and "--check mask_fill_value" in out
    assert "skipped (a prerequisite did not pass): gradients" in out  # one line for all skipped checks
    # the feedback files: the same text, and the heatmap embedded in the HTML and referenced by the Markdown
    page = (tmp_path / "feedback.html").read_text()
    png = base64.b64decode(re.search(r"data:image/png;base64,([A-Za-z0-9+/=]+)", page).group(1))
    assert png.startswith(b"\x89PNG") and png == (tmp_path / "heatmap.png").read_bytes()
    md = (tmp_path / "feedback.md").read_text()
    assert "](heatmap.png)" in md
    for text in ("weights[0, 0, 1] = 1, expected 0", "Likely mistake: zero fill", "--check mask_fill_value"):
        assert text in md and text in page.replace("&#x27;", "'")


def test_a_raised_error_shows_its_line_not_a_guessed_cause(grade_of):
    """A function that raises is shown the error and its own line; the check's usual cause and hint would be a guess,
    repeated under every check the error reaches."""
    grade = grade_of(CH5 / "bug_fixed_T8.py")
    text = selfcheck.render(grade, selfcheck.Style(False))
    block = text[text.index("FAIL reference_match"):]
    assert "your function raised RuntimeError" in block and "at line 15 in scaled_dot_product_attention" in block
    assert "Likely cause" not in block.split("Replay:")[0] and "Hint:" not in block.split("Replay:")[0]
    assert "Likely cause:" in selfcheck.render(grade_of(CH5 / "bug_zero_fill.py"), selfcheck.Style(False))


def test_query_axis_points_at_the_softmax_dim(capsys):
    code, out, _ = check(capsys, CH5 / "bug_softmax_query_axis.py")
    assert code == 1
    assert "FAIL softmax_key_axis" in out
    assert "Likely mistake: softmax over queries" in out and "dim=-1" in out
    assert re.search(r"weights\[0, \d, \d\] = [\d.]+, expected [\d.]+", out)


@pytest.mark.parametrize("name", sorted(p.name for p in CH5.iterdir() if p.name.startswith(("bug_", "vacuous_"))))
def test_every_sample_fits_one_screen_and_fails_with_1(grade_of, name):
    grade = grade_of(CH5 / name)
    text = selfcheck.render(grade, selfcheck.Style(False))
    assert len(text.splitlines()) + 1 <= SCREEN  # + the feedback line
    assert selfcheck.exit_status(grade) == 1
    for o in grade.outcomes:
        if o.status == "failed":
            assert f"FAIL {o.id}" in text
            if o.id in CATALOGUE:  # a property check, not loads or policy
                assert f"Replay: attention-grader replay {shlex.quote(str(CH5 / name))} --check {o.id}" in text


def test_replay_reproduces_exactly_that_case(capsys):
    bug = CH5 / "bug_zero_fill.py"
    _, out, _ = check(capsys, bug)
    line = next(s for s in out.splitlines() if "Replay:" in s and "mask_fill_value" in s)
    argv = shlex.split(line.split("Replay: ", 1)[1])
    assert argv[0] == "attention-grader"
    run = subprocess.run([CLI, *argv[1:]], capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stderr
    counterexample = out.split("FAIL mask_fill_value", 1)[1].splitlines()[1].strip()
    assert counterexample in run.stdout  # the same shrunk case, found again
    # the printed tensors are exact: pasted into Python with the student's function, they show the same weight
    code = run.stdout.split("yourself):\n", 1)[1].split("\n\n", 1)[0]
    ns = runpy.run_path(str(bug))
    exec(code, ns)
    index, value = re.search(r"weights\[([\d, ]+)\] = ([\d.e+-]+)", counterexample).groups()
    assert float(ns["result"][1][tuple(int(i) for i in index.split(","))]) == pytest.approx(float(value), rel=1e-3)


@pytest.mark.parametrize("sample, cid, call", [
    ("bug_sdpa_mask_inverted", "sdpa.future_weights_zero", "result = run_scaled_dot_product_attention(q, k, v, mask)"),
    ("bug_layer_no_transpose", "layer.heads_kept_apart", "result = run_multihead_self_attention(d_model, num_heads, "),
])
def test_replay_runs_a_part_check_as_check_prints_it(capsys, sample, cid, call):
    """A rubric in parts (cs336): `check` prints `--check PART.CHECK`; replay grades that check with the part's own
    grading (its subject, its exercise) and prints the part's entry point (it used to raise AttributeError)."""
    folder = SUBMISSIONS / "cs336" / sample
    code, out, _ = check(capsys, folder, "--rubric", "cs336")
    assert code == 1
    line = next(s for s in out.splitlines() if "Replay:" in s and f"--check {cid} " in s)
    argv = shlex.split(line.split("Replay: ", 1)[1])
    assert argv[:2] == ["attention-grader", "replay"]
    assert main(argv[1:]) == 1
    replayed = capsys.readouterr().out
    assert replayed.startswith(f"FAILED {cid}: ")
    counterexample = out.split(f"FAIL {cid} ", 1)[1].splitlines()[1].strip()
    assert counterexample in replayed  # the same case, found again
    assert "\nimport torch\n" in replayed and call in replayed


def test_replay_says_when_the_case_passes(capsys):
    assert main(["replay", str(CH5 / "correct_basic.py"), "--check", "mask_fill_value"]) == 0
    assert capsys.readouterr().out.startswith("PASS mask_fill_value")


def test_no_colour_when_not_a_terminal(capsys):
    _, out, _ = check(capsys, CH5 / "bug_no_scaling.py")
    assert "\033[" not in out


def test_colour_on_a_terminal_unless_no_color():
    def on_a_terminal(env):
        master, slave = pty.openpty()
        subprocess.run([CLI, "check", str(CH5 / "bug_no_scaling.py")], stdout=slave, stderr=subprocess.DEVNULL, env=env, timeout=300)
        os.close(slave)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the terminal's other end is closed and everything has been read
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(master)
        return b"".join(chunks).decode()

    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    coloured = on_a_terminal(env)
    assert "\033[1;31mFAIL\033[0m" in coloured and "no scaling" in coloured
    plain = on_a_terminal({**env, "NO_COLOR": "1"})
    assert "\033[" not in plain and "FAIL sqrt_scaling" in plain


@pytest.mark.parametrize(
    "args, words",
    [
        (["check", "no_such_file.py"], "no_such_file.py: no such file or folder"),
        (["check", str(CH5 / "correct_basic.py"), "--rubric", "no_such_rubric"], "not a bundled rubric"),
        (["replay", str(CH5 / "correct_basic.py"), "--check", "no_such_check"], "not a visible check"),
        (["replay", str(SUBMISSIONS / "cs336" / "correct_functional"), "--rubric", "cs336", "--check", "nope.loads"],
         "rubric cs336 has no part 'nope' (its parts: sdpa, layer, rope)"),
        (["replay", str(SUBMISSIONS / "cs336" / "correct_functional"), "--rubric", "cs336", "--check", "sdpa.nope"],
         "'sdpa.nope' is not a visible check of part sdpa of rubric cs336 (sdpa.loads, "),
        (["replay", str(SUBMISSIONS / "cs336" / "correct_functional"), "--rubric", "cs336", "--check", "mask_respected"],
         "a part's check is named PART.CHECK (did you mean sdpa.mask_respected?)"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, args, words):
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and words in err


def test_invalid_rubric_file_exit_2(capsys, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nexercise = "chapter5"\n[checks.loads]\npoints = -1\n')
    code, out, err = check(capsys, CH5 / "correct_basic.py", "--rubric", bad)
    assert code == 2 and "checks.loads.points" in err and len(err.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def hidden_rubric(tmp_path_factory):
    """chapter5 with inputs_unchanged and reference_match hidden."""
    text = (ROOT / "rubrics" / "chapter5.toml").read_text()
    for cid in ("inputs_unchanged", "reference_match"):
        text = text.replace(f"[checks.{cid}]\n", f'[checks.{cid}]\nvisibility = "hidden"\n')
    path = tmp_path_factory.mktemp("rubric") / "hidden.toml"
    path.write_text(text)
    return str(path)


def test_hidden_checks_are_counted_but_reveal_only_pass_or_fail(grade_of, hidden_rubric):
    grade = grade_of(CH5 / "bug_inplace_scale.py", hidden_rubric)  # fails only inputs_unchanged, now hidden
    text = selfcheck.render(grade, selfcheck.Style(False))
    assert "hidden checks: reference_match PASS, inputs_unchanged FAIL" in text
    assert "changed q[" not in text and "Replay" not in text
    assert grade.score == 96 and selfcheck.exit_status(grade) == 0

    grade = grade_of(CH5 / "bug_zero_fill.py", hidden_rubric)
    text = selfcheck.render(grade, selfcheck.Style(False))
    assert "reference_match FAIL" in text and "the reference gives" not in text and "--check reference_match" not in text
    assert selfcheck.exit_status(grade) == 1


def test_gradescope_outputs_carry_the_same_feedback_as_check(grade_of):
    grade = grade_of(CH5 / "bug_zero_fill.py")
    screen = selfcheck.render(grade, selfcheck.Style(False))
    tests = {t["extra_data"]["check_id"]: t for t in gradescope(grade)["tests"]}
    for o in grade.outcomes:
        if o.status == "failed":
            out = tests[o.id]["output"]
            assert "Likely mistake: zero fill" in out and "Replay: attention-grader replay" in out and "Hint:" in out
            for line in report.feedback(o).splitlines():
                assert line in out and line in screen
    assert json.dumps(gradescope(grade), sort_keys=True) == json.dumps(gradescope(grade_of(CH5 / "bug_zero_fill.py")), sort_keys=True)


def test_pytest_grade_json_has_the_diagnosis_and_replay(pytester):
    result = pytester.runpytest_subprocess("--submission", str(CH5 / "bug_softmax_query_axis.py"), "--grade-json", "r.json")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["Likely mistake: softmax over queries*"])
    data = json.loads((pytester.path / "r.json").read_text())
    assert "Likely mistake: softmax over queries" in data["output"]
    out = {t["extra_data"]["check_id"]: t["output"] for t in data["tests"]}["softmax_key_axis"]
    assert "dim=-1" in out and "--check softmax_key_axis" in out


def test_the_command_line_imports_no_torch_before_the_fork_server_starts():
    """`check` starts the fork server first, so that its import of torch and this process's run side by side."""
    code = "import sys, grader.frontends.cli, grader.frontends.check; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_feedback_files_are_deterministic_and_picture_only_a_failure(grade_of, tmp_path):
    from grader.reports import feedback_page as feedback

    grade = grade_of(CH5 / "bug_triu.py")
    first, again = feedback.write(grade, tmp_path / "a"), feedback.write(grade, tmp_path / "b")
    assert [p.name for p in first] == ["feedback.md", "feedback.html", "heatmap.png"]
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in again]
    written = feedback.write(grade_of(CH5 / "correct_basic.py"), tmp_path / "a")  # same folder, now nothing failed
    assert not (tmp_path / "a" / "heatmap.png").exists() and "data:image/png" not in written[1].read_text()


def test_the_cases_met_do_not_depend_on_which_modules_are_loaded(tmp_path):
    """Hypothesis mixes the literals of loaded local modules into the values it draws unless checks.py pins that
    pool; `check` loads more modules than the pytest plugin, and both must meet the same cases (without the pin,
    bug_fixed_T8 passed reference_match under `check` only)."""
    (tmp_path / "more_constants.py").write_text("VALUES = [0.37, 2.5, 7.0, 8.0, 9.0, 11.5, -3.25, 1e-3]\n")
    script = (
        "import sys\nfrom grader.sandbox import client as subject, spawn\nspawn.warm_up()\n{extra}"
        "from grader.grading.engine import Grading\nfrom grader.grading.rubric import load\nseen, call = [], subject.Subject.call\n"
        "subject.Subject.call = lambda self, q, *a, **kw: seen.append(q.tolist()) or call(self, q, *a, **kw)\n"
        "g = Grading(sys.argv[1], load('chapter5'))\ng.outcome('reference_match')\ng.close()\nprint(seen)\n"
    )
    extras = ("", f"sys.path.insert(0, {str(tmp_path)!r})\nimport more_constants, grader.reports.feedback_page, grader.frontends.check\n")
    runs = [
        subprocess.run([sys.executable, "-c", script.format(extra=extra), str(CH5 / "correct_basic.py")],
                       capture_output=True, text=True, timeout=300, check=True).stdout
        for extra in extras
    ]
    assert runs[0] == runs[1] and len(runs[0]) > 1000


def test_a_package_the_machine_lacks_is_one_line_with_its_pip_install(tmp_path, capsys):
    sub = tmp_path / "attention.py"
    sub.write_text("import einops_not_installed_anywhere.layers\n\ndef scaled_dot_product_attention(q, k, v, causal=True):\n"
                   "    return q, q\n")
    code, out, _ = check(capsys, str(sub))
    line = next(line for line in out.splitlines() if "einops_not_installed_anywhere" in line and "imports" in line)
    assert code == 1 and "pip install einops_not_installed_anywhere" in line and "Traceback" not in out
