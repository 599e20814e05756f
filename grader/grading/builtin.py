"""The checks every rubric may name besides its exercise's: `loads` and `policy`. They judge the grading itself (the
file ran, nothing reached for the grader's own code), so their `run` takes the `Grading`, not a check context."""

from __future__ import annotations

from grader.checks.core import Check

LOADS, POLICY = "loads", "policy"

BUILTIN: dict[str, Check] = {
    LOADS: Check(LOADS, "the file runs and defines the function", "", "", lambda grading: grading.load()),
    POLICY: Check(POLICY, "the submission does not import the grader or its reference", "", "",
                  lambda grading: grading.police()),
}
