"""Behaviour twins: submissions whose wrong answers on the diagnosis probes are the same (Grade.behaviour), however
differently they are written. They share a bug, named by the diagnosis or not; correct submissions answer alike
by construction and have no behaviour digest, so they are never twins."""

from __future__ import annotations

from dataclasses import dataclass

from grader.grading.diagnosis import UNRECOGNISED
from grader.grading.outcome import Grade


@dataclass(frozen=True)
class Twins:
    members: tuple[str, ...]  # sorted
    mistake: str  # the diagnosis they share, in names ("zero fill"), or "unrecognised"


def twins(grades: list[Grade]) -> list[Twins]:
    """Groups of two or more, the largest first, then by their first member."""
    groups: dict[str, list[Grade]] = {}
    for g in grades:
        if g.behaviour:
            groups.setdefault(g.behaviour, []).append(g)
    found = [Twins(tuple(sorted(g.submission for g in group)), ", ".join(group[0].diagnosis) or UNRECOGNISED)
             for group in groups.values() if len(group) > 1]
    return sorted(found, key=lambda t: (-len(t.members), t.members))
