"""The draws: seeded by check id and a course secret. The same secret gives the same grade byte for byte, another
secret other examples, no secret says the draws are public; the secret reaches no result, and a secret that was
named but cannot be read stops grading in one line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

from conftest import CH5_DIR

from grader.checks import draws as drawing
from grader.checks.draws import Draws, SecretError
from grader.grading.engine import Grading, record_plan
from grader.grading.rubric import load
from grader.reports.gradescope import gradescope as results

SECRET = "course-secret-7f3a91"


@pytest.fixture(autouse=True)
def held(monkeypatch):
    """A secret taken out of the environment stays in spawn.HELD: each test starts without one."""
    from grader.sandbox import spawn

    monkeypatch.setattr(spawn, "HELD", {})
    monkeypatch.delenv(drawing.ENV, raising=False)
    monkeypatch.delenv(drawing.ENV_FILE, raising=False)


def test_the_secret_variable_is_one_no_worker_inherits():
    from grader.sandbox import spawn

    assert drawing.ENV in spawn.KEPT_OUT


@pytest.fixture(scope="module")
def small():
    rubric = load("chapter5")
    keep = ("loads", "output_shape", "content_dependent", "future_weights_zero", "reference_match")
    checks = {c: s for c, s in rubric.checks.items() if c in keep}
    return rubric.model_copy(update={"checks": checks, "hypothesis": rubric.hypothesis.model_copy(update={"max_examples": 4})})


def test_a_seed_depends_on_the_check_its_call_and_the_salt_only():
    seeds = {Draws(salt).seed(check, i) for salt in (b"", b"a", b"b") for check in ("x", "y") for i in (0, 1)}
    assert len(seeds) == 12
    assert Draws(b"a").seed("x", 1) == Draws(b"a").seed("x", 1)


def test_the_same_secret_gives_the_same_grade_byte_for_byte_and_never_shows_it(small):
    one = Grading(CH5_DIR / "bug_zero_fill.py", small, draws=Draws(SECRET.encode())).finish()
    two = Grading(CH5_DIR / "bug_zero_fill.py", small, draws=Draws(SECRET.encode())).finish()
    text = json.dumps(results(one), sort_keys=True)
    assert text == json.dumps(results(two), sort_keys=True)
    assert SECRET not in text and SECRET not in json.dumps(one.as_dict())
    assert "draws: salted with the course secret" in one.environment


def test_another_secret_draws_other_examples(small):
    """What a book or a public package knows is no example of a grading under a secret."""
    def tensors(x):
        if isinstance(x, torch.Tensor):
            return [x]
        if isinstance(x, (tuple, list)):
            return [t for y in x for t in tensors(y)]
        return [t for y in x.values() for t in tensors(y)] if isinstance(x, dict) else []

    def examples(draws):
        plan = record_plan(small, draws)
        return [t for cid in sorted(plan) for _, drawn in plan[cid] for args, kw, _ in drawn for t in tensors((args, kw))]

    public, salted, again = examples(Draws()), examples(Draws(SECRET.encode())), examples(Draws(SECRET.encode()))
    assert all(torch.equal(a, b) for a, b in zip(salted, again)) and len(salted) == len(again) > 20
    shared = {t.numpy().tobytes() for t in public} & {t.numpy().tobytes() for t in salted}
    assert len(shared) < len(salted) / 10  # a few tiny inputs may coincide (all zeros); the rest differ


def test_without_a_secret_the_report_says_the_draws_are_public(small):
    grade = Grading(CH5_DIR / "correct_basic.py", small).finish()
    assert any(line.startswith("draws: public") for line in grade.environment)


@pytest.mark.parametrize("env, why", [
    ({drawing.ENV: "x", drawing.ENV_FILE: "/f"}, "both"),
    ({drawing.ENV_FILE: "/nonexistent/secret"}, "cannot read the course secret"),
    ({drawing.ENV: "  "}, "the course secret is empty"),
])
def test_a_secret_that_cannot_be_used_is_one_line(monkeypatch, env, why):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SecretError, match=why):
        drawing.course()


def test_a_secret_from_a_file(monkeypatch, tmp_path):
    (tmp_path / "secret").write_text(SECRET + "\n")
    monkeypatch.setenv(drawing.ENV_FILE, str(tmp_path / "secret"))
    assert drawing.course() == Draws(SECRET.encode())


def test_the_commands_stop_on_an_unreadable_secret(tmp_path):
    env = {"PATH": "/usr/bin:/bin", drawing.ENV_FILE: str(tmp_path / "missing")}
    for args in (["check", str(CH5_DIR / "correct_basic.py")], ["grade", str(CH5_DIR), "--out", str(tmp_path / "o")]):
        done = subprocess.run([sys.executable, "-m", "grader.frontends.cli", *args], capture_output=True, text=True,
                              env=env, timeout=120)
        assert done.returncode == 2, done.stderr
        assert done.stderr.strip().count("\n") == 0 and "cannot read the course secret" in done.stderr
