"""Fingerprints of a text: hashes of every run of K normalized tokens, and the few that winnowing selects.

Winnowing (Schleimer, Wilkerson and Aiken, SIGMOD 2003; what MOSS does) keeps the smallest hash of every window of
WINDOW consecutive k-grams, so any run of K + WINDOW - 1 tokens that two texts share leaves them a shared
fingerprint, whatever surrounds it, while only about 2 / (WINDOW + 1) of the k-grams are kept.

Written here rather than taken from copydetect: copydetect hashes k-grams with Python's hash(), which is salted per
process, so its fingerprints could neither be shipped (the public corpus) nor compared across runs; it reduces
every name to V (torch.softmax and a student's helper look alike); and it compares every pair of files in full.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from grader.insight.tokens import Token

K = 8  # tokens per k-gram: `w = torch.softmax(s, dim=-1)` is 12
WINDOW = 4  # any shared run of K + WINDOW - 1 = 11 tokens leaves a shared fingerprint


def kgrams(texts: list[str]) -> list[int]:
    """A 64-bit hash of each run of K tokens: blake2b, the same on every machine, process and Python version."""
    k = K
    return [int.from_bytes(hashlib.blake2b("\x1f".join(texts[i:i + k]).encode(), digest_size=8).digest(), "big")
            for i in range(len(texts) - k + 1)]


def winnow(hashes: list[int]) -> list[int]:
    """Indices of the hashes robust winnowing selects: the minimum of each window, the rightmost on a tie (so a
    run of equal hashes is selected once), each index once. A text shorter than a window keeps its minimum."""
    if not hashes:
        return []
    window = WINDOW
    chosen: list[int] = []
    for start in range(max(1, len(hashes) - window + 1)):
        span = hashes[start:start + window]
        low = min(span)
        at = start + len(span) - 1 - span[::-1].index(low)
        if not chosen or chosen[-1] != at:
            chosen.append(at)
    return chosen


@dataclass(frozen=True)
class Starter:
    """What the course handed out: its normalized lines and its k-grams never count as anyone's own."""

    lines: frozenset[tuple[str, ...]]
    kgrams: frozenset[int]

    @classmethod
    def of(cls, tokens: list[Token]) -> Starter:
        return cls(frozenset(_by_line(tokens)), frozenset(kgrams([t.text for t in tokens])))


NO_STARTER = Starter(frozenset(), frozenset())


STARTER = -1  # in Prints.hashes, a k-gram the starter has: never anyone's own (no hash is negative)


@dataclass(frozen=True)
class Prints:
    """One text's fingerprints: its tokens (the starter's lines left out), the hash of the k-gram at each token
    (STARTER where the starter has it), and the selected ones: hash -> the token indices it was selected at."""

    tokens: tuple[Token, ...]
    hashes: tuple[int, ...]
    selected: dict[int, tuple[int, ...]]


def fingerprint(tokens: list[Token], starter: Starter = NO_STARTER) -> Prints:
    kept = [t for line in _lines(tokens) if tuple(x.text for x in line) not in starter.lines for t in line]
    hashes = [STARTER if h in starter.kgrams else h for h in kgrams([t.text for t in kept])]
    selected: dict[int, list[int]] = {}
    for i in winnow(hashes):
        if hashes[i] != STARTER:
            selected.setdefault(hashes[i], []).append(i)
    return Prints(tuple(kept), tuple(hashes), {h: tuple(at) for h, at in selected.items()})


def _lines(tokens: list[Token]) -> list[list[Token]]:
    """Tokens grouped by the (part, line) they come from, in order."""
    found: list[list[Token]] = []
    for t in tokens:
        if found and (found[-1][0].part, found[-1][0].line) == (t.part, t.line):
            found[-1].append(t)
        else:
            found.append([t])
    return found


def _by_line(tokens: list[Token]) -> list[tuple[str, ...]]:
    return [tuple(t.text for t in line) for line in _lines(tokens)]
