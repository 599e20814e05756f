"""The checks every rubric may name besides its exercise's: `loads` and `policy`. They judge the grading itself (the
file ran, nothing reached for the grader's own code), so their `run` takes the `Grading`, not a check context: they
set its `source`, `subject` and, where it stages the submission, `staged` and `scratch`."""

from __future__ import annotations

import tempfile
from pathlib import Path

from grader.checks.core import Check
from grader.grading.outcome import LOADS, POLICY, Failure, Run, Status
from grader.sandbox.client import StudentError, Subject, WorkerLost
from grader.submission import loader, policy, staging
from grader.submission.source import LoadError


def load(grading) -> Run:
    """Stage the submission, read it and start its worker."""
    failed = lambda message: Run(Status.FAILED, message, Failure.NOT_LOADED)  # noqa: E731
    try:
        staged = grading.staged or _stage(grading)
        if staged.refused:
            return failed(staged.refused)
        assert staged.copy is not None  # staged, not refused
        grading.source, entry = loader.read(staged.copy, grading.rubric.names, grading.exercise.inputs, grading.reading,
                                            shown=grading.path, others=grading.others,
                                            code_kb=grading.rubric.limits.max_source_kb)
    except LoadError as e:
        grading.source = getattr(e, "source", None)  # what definitions-only loading left out explains a missing name
        return failed(str(e))
    ex = grading.exercise
    grading.subject = Subject(grading.source, entry, list(ex.results), ex.inputs, grading.rubric.limits,
                              device="cuda" if grading.device == "cuda" else "cpu", build=ex.build)
    try:
        grading.subject.load()
    except (StudentError, WorkerLost) as e:
        return failed(str(e))
    return Run(Status.PASSED, f"found {entry} in {Path(grading.source.filename).name}")


def _stage(grading) -> staging.Staged:
    grading.scratch = tempfile.mkdtemp(prefix="attention-grader-staged-")  # removed by Grading.close
    grading.staged = staging.stage(grading.path, Path(grading.scratch), staging.Caps.of(grading.rubric.limits))
    return grading.staged


def police(grading) -> Run:
    """What the source and the worker show of reaching for the grader's own code."""
    pol = grading.rubric.policy
    found = policy.violations(grading.source.code, pol.forbidden_imports) if grading.source else []
    if grading.subject is not None:
        found += [f"tried to import {name!r} while running" for name in sorted(grading.subject.blocked)]
    if found:
        return Run(Status.FAILED, f"{pol.message} ({'; '.join(found[:3])})", Failure.WRONG)
    return Run(Status.PASSED)


BUILTIN: dict[str, Check] = {
    LOADS: Check(LOADS, "the file runs and defines the function", "", "", load),
    POLICY: Check(POLICY, "the submission does not import the grader or its reference", "", "", police),
}
