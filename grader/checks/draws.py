"""Which examples a check draws: hypothesis seeded by the check's id, the number of its `prove` call and a salt.

The same salt, check and submission always meet the same examples, whatever a property's source text looks like.
The salt is the course secret, which the teacher keeps (`ATTENTION_GRADER_SECRET`, or a file named by
`ATTENTION_GRADER_SECRET_FILE`): without one, the draws follow from public data only, and anyone with the grader
can know every example, so the report says so. A student build draws with a salt of its own (its book's), so what
it ships holds none of the teacher's examples. The salt goes into seeds and cache keys only, each through sha256;
never into results, feedback or a student build.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

ENV = "ATTENTION_GRADER_SECRET"
ENV_FILE = "ATTENTION_GRADER_SECRET_FILE"


class SecretError(Exception):
    """The course secret was asked for but cannot be read: one line, exit status 2."""


@dataclass(frozen=True)
class Draws:
    salt: bytes = b""  # empty: public draws
    own: bool = False  # a student build's own salt (its book's), not the course's

    def seed(self, check: str, index: int) -> int:
        """The seed of `check`'s `index`-th property (hypothesis' own `seed`, which overrides derandomize)."""
        h = hashlib.sha256(b"attention-grader draws\0" + self.salt + b"\0" + f"{check}\0{index}".encode())
        return int.from_bytes(h.digest()[:16], "big")

    @property
    def key(self) -> str:
        """Part of every cache key the draws decide (example plans, the gradebook), revealing nothing of the salt."""
        return hashlib.sha256(b"attention-grader draws key\0" + self.salt).hexdigest()[:16] if self.salt else "public"

    def line(self) -> str:
        """What the report says about the draws."""
        if self.own:
            return "draws: this self-check's own examples; your teacher's grading draws others"
        if self.salt:
            return "draws: salted with the course secret"
        return (f"draws: public (no course secret set: anyone with the grader can know every example; a teacher sets "
                f"{ENV} or {ENV_FILE} for final grading)")


def course() -> Draws:
    """The course's draws, from the environment; SecretError when a secret is named but unusable. A secret given as
    a value is taken out of the environment (sandbox.spawn.hold): no fork server, so no worker, inherits it."""
    from grader.sandbox import spawn

    spawn.hold()
    value = spawn.HELD.get(ENV)
    path = os.environ.get(ENV_FILE)
    if value is not None and path is not None:
        raise SecretError(f"both {ENV} and {ENV_FILE} are set: keep one")
    if path is not None:
        try:
            with open(path, "rb") as f:
                value = f.read(1 << 16).decode("utf-8").strip()
        except OSError as e:
            raise SecretError(f"{ENV_FILE}={path}: cannot read the course secret ({e.strerror})") from None
        except UnicodeDecodeError:
            raise SecretError(f"{ENV_FILE}={path}: the course secret is not UTF-8 text") from None
        where = f"{ENV_FILE}={path}"
    else:
        where = ENV
    if value is None:
        return Draws()
    if not value.strip():
        raise SecretError(f"{where}: the course secret is empty")
    return Draws(value.strip().encode())


def student_build(course: Draws) -> Draws:
    """A student build's own draws: derived one way from the course's, so the salt it ships reveals nothing."""
    return Draws(hashlib.sha256(b"attention-grader student build\0" + course.salt).digest(), own=True)
