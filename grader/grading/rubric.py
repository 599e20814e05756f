"""Rubrics are data: a TOML file validated by pydantic into points, visibility, dependencies, budgets and limits."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from grader.exercises import EXERCISES
from grader.grading.builtin import BUILTIN, LOADS, POLICY
from grader.sandbox.limits import Limits  # a rubric's [limits] are the worker's limits, validated where they apply

Visibility = Literal["visible", "hidden", "after_due_date", "after_published"]


class RubricError(Exception):
    """One line naming the rubric, the field and the problem."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CheckSpec(_Strict):
    points: float = Field(ge=0)
    visibility: Visibility = "visible"
    depends: list[str] = []
    hint: str | None = None
    max_examples: int | None = Field(default=None, ge=1, le=10_000)


class Tolerance(_Strict):
    rtol: float = Field(ge=0)
    atol: float = Field(ge=0)


class Policy(_Strict):
    forbidden_imports: list[str] = ["reference", "grader"]
    on_violation: Literal["zero", "deduct", "report"] = "zero"
    deduct: float = Field(default=0, ge=0)
    message: str = "Submissions may not use the grader's own code."


class Hypothesis(_Strict):
    max_examples: int = Field(default=20, ge=1, le=10_000)


class Rubric(_Strict):
    name: str
    title: str = ""
    exercise: str
    entry_points: list[str] = []
    hypothesis: Hypothesis = Hypothesis()
    tolerances: dict[Literal["float16", "bfloat16", "float32", "float64"], Tolerance] = {
        "float32": Tolerance(rtol=1e-4, atol=1e-5),
        "float64": Tolerance(rtol=1e-7, atol=1e-9),
    }
    limits: Limits = Limits()
    policy: Policy = Policy()
    conventions: dict[str, str] = {}  # the exercise's own conventions (sdpa_mask's mask and fully masked rows)
    packages: list[str] = []  # pip requirements student code may import (einops): every bundle installs them
    checks: dict[str, CheckSpec]
    _origin: str = PrivateAttr(default="")  # the NAME|FILE it was loaded from, for commands that load it again

    @property
    def origin(self) -> str:
        return self._origin or self.name

    @field_validator("packages")
    @classmethod
    def _requirements(cls, found: list[str]) -> list[str]:
        from packaging.requirements import InvalidRequirement, Requirement

        for r in found:
            try:
                Requirement(r)
            except InvalidRequirement:
                raise ValueError(f"{r!r} is not a pip requirement (e.g. \"einops>=0.7\")") from None
        return found

    @field_validator("exercise")
    @classmethod
    def _registered(cls, name: str) -> str:
        if name not in EXERCISES:
            raise ValueError(f"unknown exercise {name!r} (known: {', '.join(EXERCISES)})")
        return name

    @model_validator(mode="after")
    def _consistent(self):
        options = EXERCISES[self.exercise].options
        for name, value in self.conventions.items():
            if name not in options:
                known_names = ", ".join(options) or "none"
                raise ValueError(f"conventions.{name}: the {self.exercise} exercise has no such convention (it has: {known_names})")
            if value not in options[name]:
                raise ValueError(f"conventions.{name}: {value!r} is not one of {', '.join(options[name])}")
        known = EXERCISES[self.exercise].catalogue
        for cid, spec in self.checks.items():
            if cid not in BUILTIN and cid not in known:
                raise ValueError(f"checks.{cid}: unknown check for the {self.exercise} exercise (known: {', '.join(sorted(known))})")
            for dep in spec.depends:
                if dep not in self.checks:
                    raise ValueError(f"checks.{cid}.depends: {dep!r} is not a check of this rubric")
        if LOADS not in self.checks:
            raise ValueError(f"checks.{LOADS}: every rubric needs the {LOADS} check")
        self.order()  # raises on a cycle
        if self.max_score <= 0:
            raise ValueError("checks: the points add up to 0")
        return self

    @property
    def max_score(self) -> float:
        return sum(s.points for s in self.checks.values())

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.entry_points) or EXERCISES[self.exercise].entry_points

    def order(self) -> list[str]:
        """Check ids with every prerequisite before its dependants (file order otherwise); policy last."""
        done: list[str] = []
        visiting: set[str] = set()

        def visit(cid: str) -> None:
            if cid in done:
                return
            if cid in visiting:
                raise ValueError(f"checks.{cid}.depends: dependency cycle through {cid!r}")
            visiting.add(cid)
            for dep in self.checks[cid].depends:
                visit(dep)
            visiting.discard(cid)
            done.append(cid)

        for cid in self.checks:
            if cid != POLICY:
                visit(cid)
        if POLICY in self.checks:
            visit(POLICY)
        return done


def _locate(name_or_path: str) -> Path:
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.exists():
        return path
    bundled = resources.files("grader.rubrics").joinpath(f"{name_or_path}.toml")
    if bundled.is_file():
        return Path(str(bundled))
    known = sorted(p.name.removesuffix(".toml") for p in resources.files("grader.rubrics").iterdir() if p.name.endswith(".toml"))
    raise RubricError(f"rubric {name_or_path!r}: no such file, and not a bundled rubric ({', '.join(known)})")


def load(name_or_path: str) -> Rubric:
    path = _locate(name_or_path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise RubricError(f"rubric {path}: {e.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise RubricError(f"rubric {path}: not valid TOML: {e}") from None
    try:
        rubric = Rubric.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        more = f" (and {len(e.errors()) - 1} more)" if len(e.errors()) > 1 else ""
        raise RubricError(f"rubric {path}: {loc + ': ' if loc else ''}{msg}{more}") from None
    rubric._origin = name_or_path
    return rubric


def content_hash(rubric: Rubric) -> str:
    import hashlib

    return hashlib.sha256(rubric.model_dump_json().encode()).hexdigest()[:16]
