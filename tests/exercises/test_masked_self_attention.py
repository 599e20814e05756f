"""masked_self_attention's own verdicts beyond the matrix: vacuous functions, NaN rows, the plugin."""

import re

import pytest

from conftest import SUBMISSIONS

MSA = SUBMISSIONS / "masked_self_attention"
RUBRIC = "masked_self_attention"


@pytest.mark.parametrize("name", ["vacuous_zeros.py", "vacuous_identity.py", "vacuous_causal_mean.py"])
def test_vacuous_functions_score_at_most_ten_percent(grade_of, name):
    grade = grade_of(MSA / name, RUBRIC)
    assert grade.score <= 0.1 * grade.max_score


def test_left_padding_nan_says_nan_and_where_on_a_small_mask(grade_of):
    """The shrunk case: T = 2, the sequence that starts with a pad named, and the query that sees only padding."""
    message = {o.id: o for o in grade_of(MSA / "bug_nan_left_padding.py", RUBRIC).outcomes}["padded_rows_finite"].message
    found = re.match(r"hidden_states\[(\d), \d+, 0, :\] is NaN for padding_mask (\[.*\]) \(query 0 sees only padding\)", message)
    assert found, message
    mask = eval(found.group(2))
    assert len(mask) <= 2 and len(mask[0]) == 2 and mask[int(found.group(1))] == [0, 1]


def test_the_text_version_fixed_is_the_only_difference(grade_of):
    """The course text's version loses exactly the padded_rows_finite points; zeroing its NaN rows earns them back."""
    text = grade_of(MSA / "bug_nan_left_padding.py", RUBRIC)
    fixed = grade_of(MSA / "correct_text_fixed.py", RUBRIC)
    assert fixed.score - text.score == {o.id: o for o in fixed.outcomes}["padded_rows_finite"].max_points


def test_pytest_plugin_grades_with_the_masked_rubric(pytester):
    path = MSA / "bug_nan_left_padding.py"
    result = pytester.runpytest_subprocess("--submission", str(path), "--rubric", RUBRIC, "-v")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*padded_rows_finite FAILED*", "*is NaN for padding_mask*", "Total: 90/100"])
    assert "heads_independent PASSED" in result.stdout.str()
