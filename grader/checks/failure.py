"""What a failed property is: `Failed`, the counterexample a student can act on, and `Case`, its inputs for the
pictures and the replay. Apart from core, so that the replay (checks.replay) can catch it without importing core."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from grader.sandbox.client import StudentError


class Failed(Exception):
    """The property does not hold; the message is the counterexample, written for the student."""

    case: Case | None = None  # the shrunk failing inputs, attached by Ctx.prove
    error: StudentError | None = None  # what the function raised or returned wrong, when that is the failure


@dataclass
class Case:
    """A failing example's inputs (those of its first call) and the weights the submission and the reference give
    on them: what the feedback draws and replay prints. The report ignores it."""

    args: tuple
    kw: dict
    names: tuple[str, ...] = ("q", "k", "v")  # the exercise's names of the positional inputs
    weights: torch.Tensor | None = None
    expected: torch.Tensor | None = None
