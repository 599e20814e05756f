"""The pytest plugin, driven as a teacher would: `pytest --submission ...` in a fresh folder."""

import json

from conftest import CH5_DIR as CH5


def test_correct_file_passes_with_full_score_json(pytester):
    result = pytester.runpytest_subprocess("--submission", str(CH5 / "correct_basic.py"), "--rubric", "chapter5", "--grade-json", "r.json")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["Total: 100/100", "*17 passed*"])
    data = json.loads((pytester.path / "r.json").read_text())
    assert data["score"] == data["max_score"] == 100
    test = data["tests"][1]
    assert set(test) >= {"name", "score", "max_score", "status", "output", "visibility", "extra_data"}
    assert [t["extra_data"]["check_id"] for t in data["tests"]][:3] == ["loads", "output_shape", "content_dependent"]


def test_buggy_file_exits_1_and_names_the_check(pytester):
    result = pytester.runpytest_subprocess("--submission", str(CH5 / "bug_zero_fill.py"), "-v")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*future_weights_zero FAILED*", "*mask_fill_value*FAIL*", "Total: 57/100"])


def test_only_the_rubric_checks_run_even_beside_other_tests(pytester):
    pytester.makepyfile(test_unrelated="def test_x():\n    raise AssertionError('must not run')\n")
    result = pytester.runpytest_subprocess("--submission", str(CH5 / "correct_basic.py"), "-k", "loads or output_shape")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*2 passed, 15 deselected*"])
    assert "must not run" not in result.stdout.str()


def test_without_submission_the_plugin_is_invisible(pytester):
    pytester.makepyfile(test_plain="def test_ok():\n    assert True\n")
    result = pytester.runpytest_subprocess()
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*1 passed*"])
    assert "attention-grader" not in result.stdout.str().split("plugins:")[-1].split("\n", 1)[1]


def test_bad_rubric_is_one_line_and_exit_2(pytester):
    bad = pytester.makefile(".toml", bad='name = "x"\nexercise = "chapter5"\n[checks.loads]\npoints = -1\n')
    result = pytester.runpytest_subprocess("--submission", str(CH5 / "correct_basic.py"), "--rubric", str(bad))
    assert result.ret == 2
    assert "checks.loads.points" in result.stderr.str()
    assert "Traceback" not in result.stderr.str()


def test_from_the_project_root_only_the_checks_run():
    import subprocess
    import sys

    from conftest import ROOT

    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--submission", str(CH5 / "bug_no_scaling.py"), "-p", "no:cacheprovider"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 1
    assert "2 failed, 14 passed, 1 skipped" in run.stdout
    assert "test_reference" not in run.stdout and "tests/" not in run.stdout


def test_a_run_stopped_at_the_first_failure_grades_only_the_checks_it_ran(pytester):
    """-x: the grading process grades ahead of pytest, so what pytest never ran is graded again without it: the
    checks after the first failure are "not run" and earn nothing, as in a grading that never reached them."""
    result = pytester.runpytest_subprocess("--submission", str(CH5 / "bug_zero_fill.py"), "-x", "--grade-json", "r.json")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["Total: 18/100", "*1 failed, 4 passed*"])
    tests = json.loads((pytester.path / "r.json").read_text())["tests"]
    assert [t["extra_data"]["check_id"] for t in tests if t["status"] == "passed"] == [
        "loads", "output_shape", "content_dependent", "weights_sum_to_one"]
    assert all("not run in this session" in t["output"] for t in tests[5:])
