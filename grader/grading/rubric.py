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
    parts: dict[str, Rubric] = {}  # a rubric in parts: each graded on its own, its checks here as "part.check"
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
        if self.parts:  # each part was checked on its own; here only how their checks add up
            self.order()
            return self
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
    rubric = _in_parts(path, data) if data.get("parts") else _validated(path, {k: v for k, v in data.items() if k != "parts"})
    rubric._origin = name_or_path
    return rubric


def _validated(path: Path, data: dict, where: str = "") -> Rubric:
    try:
        return Rubric.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        msg = err["msg"].removeprefix("Value error, ")  # a whole-rubric error names its field in the message
        more = f" (and {len(e.errors()) - 1} more)" if len(e.errors()) > 1 else ""
        raise RubricError(f"rubric {path}: {where}{loc + ': ' if loc else ''}{msg}{more}") from None


PART_FIELDS = {"name", "title", "parts", "packages"}  # what a rubric in parts says itself; the rest is each part's


def _in_parts(path: Path, data: dict) -> Rubric:
    """A rubric whose `[parts.NAME]` each name a rubric (bundled, or a file beside this one) and what differs from
    it (entry_points, conventions, hypothesis, limits, packages; `checks.ID` fields merged into that check's, or
    `checks.ID = false` to leave it out), or are a whole rubric themselves, with an `exercise` and no `rubric` (what
    `dumps` writes). Its own `packages` are the handout's, which any part's code may import."""
    extra = sorted(set(data) - PART_FIELDS)
    if extra:
        raise RubricError(f"rubric {path}: {extra[0]}: a rubric in parts sets it in each part ([parts.NAME])")
    parts = data["parts"]
    if not isinstance(parts, dict) or not parts:
        raise RubricError(f"rubric {path}: parts: expected [parts.NAME] tables, each with a rubric")
    found: dict[str, dict] = {}
    for name, spec in parts.items():
        if not name.isidentifier():
            raise RubricError(f"rubric {path}: parts.{name}: a part's name is a word (letters, digits, _)")
        dumped = isinstance(spec, dict) and "rubric" not in spec and "exercise" in spec  # a part written whole (dumps)
        if not dumped and (not isinstance(spec, dict) or not isinstance(spec.get("rubric"), str)):
            raise RubricError(f"rubric {path}: parts.{name}.rubric: required, a bundled rubric's name or a file")
        beside = path.parent / spec.get("rubric", "")
        base = {"checks": {}} if dumped else load(str(beside) if beside.suffix == ".toml" else spec["rubric"]).model_dump()
        over = {k: v for k, v in spec.items() if k != "rubric"}
        checks = dict(base.pop("checks"))
        for cid, change in (over.pop("checks", None) or {}).items():
            if change is False:  # `checks.ID = false`: the part leaves that check out
                checks.pop(cid, None)
            elif isinstance(change, dict):
                checks[cid] = {**checks.get(cid, {}), **change}
            else:
                raise RubricError(f"rubric {path}: parts.{name}.checks.{cid}: expected a table, or false to leave it out")
        merged = {**base, **over, "checks": checks, "name": f"{data.get('name', path.stem)}.{name}"}
        found[name] = _validated(path, merged, f"parts.{name}.").model_dump()
    first = next(iter(found.values()))
    whole = {
        "name": data.get("name", path.stem), "title": data.get("title", ""), "exercise": first["exercise"],
        "limits": {**first["limits"], "total_timeout": sum(part["limits"]["total_timeout"] for part in found.values())},
        "packages": sorted({*data.get("packages", []), *(p for part in found.values() for p in part["packages"])}),
        "checks": {f"{p}.{cid}": {**spec, "depends": [f"{p}.{d}" for d in spec["depends"]]}
                   for p, part in found.items() for cid, spec in part["checks"].items()},
        "parts": found,
    }
    return _validated(path, whole)


def dumps(rubric: Rubric) -> str:
    """The rubric as TOML that `load` reads back to an equal rubric, naming no other rubric: a rubric in parts has
    each part whole (a student build ships its rubric alone, with no bundled rubric for a part to name)."""
    data = rubric.model_dump(exclude_none=True)
    if rubric.parts:
        data = {k: data[k] for k in ("name", "title", "packages")} | {"parts": {
            name: {k: v for k, v in part.model_dump(exclude_none=True).items() if k != "parts"}
            for name, part in rubric.parts.items()}}
    else:
        data.pop("parts")
    return _toml(data) + "\n"


def _toml(data: dict, prefix: str = "") -> str:
    """TOML for a rubric's values: strings, numbers, booleans and lists of them as JSON writes them (TOML reads
    those the same), tables as [a.b] after their plain keys."""
    import json
    import re

    key = lambda k: k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k)  # noqa: E731
    lines = [f"{key(k)} = {json.dumps(v)}" for k, v in data.items() if not isinstance(v, dict)]
    for k, v in data.items():
        if isinstance(v, dict):
            lines += ["", f"[{prefix}{key(k)}]", _toml(v, f"{prefix}{key(k)}.")]
    return "\n".join(lines)


def content_hash(rubric: Rubric) -> str:
    import hashlib

    return hashlib.sha256(rubric.model_dump_json().encode()).hexdigest()[:16]
