"""A rubric in parts: one submission, several functions, each part graded by its own exercise; one grade, its check
ids prefixed by the part. The course's case (chapter 5 and the masked variant in one folder) and CS336's (the
adapters of a handout folder, `rubrics/cs336.toml`)."""

import json
import shutil
import subprocess
import sys

import pytest

from conftest import SUBMISSIONS, failed

from grader.grading.engine import Grading
from grader.grading.rubric import RubricError, load

COURSE = """name = "course"
title = "Chapter 5, then the masked layer"
[parts.ch5]
rubric = "chapter5"
[parts.masked]
rubric = "masked_self_attention"
checks.padded_rows_finite = { points = 10 }
"""


@pytest.fixture
def course(tmp_path):
    path = tmp_path / "course.toml"
    path.write_text(COURSE)
    return load(str(path))


def folder(tmp_path, ch5: str | None, masked: str | None):
    sub = tmp_path / "hand_in"
    sub.mkdir()
    if ch5:
        shutil.copy(SUBMISSIONS / "chapter5" / ch5, sub / "attention.py")
    if masked:
        shutil.copy(SUBMISSIONS / "masked_self_attention" / masked, sub / "masked.py")
    return sub


def test_the_parts_add_up_and_keep_their_own_checks(course):
    assert list(course.parts) == ["ch5", "masked"]
    assert course.max_score == 100 + load("masked_self_attention").max_score + 10 - load(
        "masked_self_attention").checks["padded_rows_finite"].points
    assert "ch5.causal_flag_off" in course.checks and "masked.padding_keys_zero" in course.checks
    assert course.checks["ch5.future_weights_zero"].depends == ["ch5.content_dependent"]


def test_a_rubric_in_parts_lists_the_handouts_packages_beside_its_parts(tmp_path):
    """CS336's handout imports regex, tiktoken... in modules any part's code may import: the whole rubric lists them,
    and every bundle installs them with the parts' own."""
    path = tmp_path / "course.toml"
    path.write_text('packages = ["regex"]\n' + COURSE.replace('rubric = "chapter5"', 'rubric = "chapter5"\npackages = ["einops"]'))
    assert load(str(path)).packages == ["einops", "regex"]
    assert {"regex", "tiktoken>=0.9.0"} <= set(load("cs336").packages)


def test_correct_parts_score_full_marks(tmp_path, course):
    grade = Grading(folder(tmp_path, "correct_basic.py", "correct_loop.py"), course).finish()
    assert failed(grade) == set() and grade.score == grade.max_score == course.max_score
    assert grade.outcomes[0].id == "ch5.loads" and grade.outcomes[0].title.startswith("ch5: ")


def test_a_bug_in_one_part_costs_only_that_parts_points(tmp_path, course):
    grade = Grading(folder(tmp_path, "correct_basic.py", "bug_padding_ignored.py"), course).finish()
    lost = failed(grade)
    assert lost and all(cid.startswith("masked.") for cid in lost)
    assert sum(o.points for o in grade.outcomes if o.id.startswith("ch5.")) == 100


def test_a_missing_part_fails_its_loads_and_the_other_part_is_graded(tmp_path, course):
    grade = Grading(folder(tmp_path, "correct_basic.py", None), course).finish()
    loads = next(o for o in grade.outcomes if o.id == "masked.loads")
    assert loads.status == "failed" and "masked_self_attention" in loads.message
    assert grade.score == 100 and grade.problems().startswith("masked.loads failed: ")


@pytest.mark.parametrize("text, field", [
    ('name = "c"\nexercise = "chapter5"\n[parts.a]\nrubric = "chapter5"\n', "exercise: a rubric in parts sets it in each part"),
    ('name = "c"\n[parts.a]\nentry_points = ["f"]\n', "parts.a.rubric: required"),
    ('name = "c"\n[parts.a]\nrubric = "chapter5"\nchecks.nonsense = { points = 1 }\n', "parts.a.checks.nonsense"),
    ('name = "c"\n[parts.a]\nrubric = "sdpa_mask"\nconventions = { mask = "upside_down" }\n', "parts.a.conventions.mask"),
    ('name = "c"\n[parts.a]\nrubric = "no_such_rubric"\n', "no_such_rubric"),
])
def test_a_bad_part_is_one_line_naming_it(tmp_path, text, field):
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(RubricError) as e:
        load(str(path))
    assert field in str(e.value) and "\n" not in str(e.value)


def test_pytest_names_each_test_by_its_part_and_writes_one_results_json(tmp_path, course):
    sub = folder(tmp_path, "correct_basic.py", "bug_padding_ignored.py")
    out = tmp_path / "r.json"
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--submission", str(sub),
                          "--rubric", str(tmp_path / "course.toml"), "--grade-json", str(out)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert run.returncode == 1, run.stdout[-2000:]
    data = json.loads(out.read_text())
    ids = [t["extra_data"]["check_id"] for t in data["tests"]]
    assert ids[0] == "ch5.loads" and "masked.padding_keys_zero" in ids
    assert data["score"] < data["max_score"] == course.max_score


# -- CS336, as handed in ---------------------------------------------------------------------------------------------
CS336 = SUBMISSIONS / "cs336"


@pytest.mark.parametrize("name", ["correct_functional", "correct_modules", "bug_public_incfly", "bug_public_donglinkang",
                                  "bug_layer_no_transpose"])
def test_a_cs336_folder_with_a_right_sdpa_gets_the_sdpa_part_in_full(name, grade_of):
    """correct_functional and donglinkang keep the handout's `importlib.metadata.version("cs336_basics")`: the worker's
    copy of the folder has its packages' metadata, as `uv sync` gives the course's environment. A fully masked row is
    outside CS336's contract (the public SDPAs give NaN there): not checked."""
    grade = grade_of(CS336 / name, "cs336")
    sdpa = [o for o in grade.outcomes if o.id.startswith("sdpa.")]
    assert sdpa and all(o.status == "passed" for o in sdpa), [(o.id, o.message[:200]) for o in sdpa if o.status != "passed"]


NO_TRANSPOSE = {"future_invariance", "heads_kept_apart", "reference_match"}
DONGLINKANG = {"output_shape", "device_placement"}  # built on the CPU, [B, T, d_model] float32 alone: charged once


@pytest.mark.parametrize("name, lost", [
    ("correct_functional", set()), ("correct_modules", set()),
    ("bug_public_incfly", {"rope.positions_used"}),  # [B, T] positions broadcast against the heads
    ("bug_public_donglinkang", {f"{p}.{c}" for p in ("layer", "rope") for c in DONGLINKANG} | {"rope.positions_used"}),
    ("bug_layer_no_transpose", {f"{p}.{c}" for p in ("layer", "rope") for c in NO_TRANSPOSE}),
])
def test_a_cs336_folders_layers_are_graded_through_their_adapters(name, lost, grade_of):
    grade = grade_of(CS336 / name, "cs336")
    assert {o.id for o in grade.outcomes if o.id.startswith(("layer.", "rope.")) and o.status == "failed"} == lost


def test_cs336_mask_read_the_other_way_round(grade_of):
    grade = grade_of(CS336 / "bug_sdpa_mask_inverted", "cs336")
    assert {"sdpa.mask_respected", "sdpa.future_weights_zero", "sdpa.reference_match"} <= failed(grade)
    assert grade.diagnosis[:1] == ["mask inverted"]


def test_cs336_the_handout_as_given_scores_0_and_says_not_implemented(grade_of):
    grade = grade_of(CS336 / "vacuous_handout", "cs336")
    assert grade.score == 0 and "NotImplementedError" in " ".join(o.message for o in grade.outcomes)


# A student build of a rubric in parts is one wheel, one book per part: tests/frontends/test_bundle_student.py
