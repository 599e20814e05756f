"""Which submissions share code: near-duplicate pairs in the class, with the regions they share, and the source a
submission's code may come from (insight.corpus).

Near-linear in practice: an inverted index from fingerprint to the submissions holding it, so only pairs sharing a
fingerprint are ever counted, and a fingerprint more than COMMON of the class hold is how the course writes
attention (MOSS's -m), not a copy: it counts for no pair, which also bounds the work any fingerprint costs.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from grader.insight import winnow
from grader.insight.corpus import Source
from grader.insight.winnow import Prints

SIMILAR = 0.5  # a pair sharing this share of the smaller one's fingerprints is listed
TRACED = 0.2  # a submission with this share of its tokens in long runs found in a source is traced to it
MIN_RUN = 24  # tokens: two or three lines of the same code, in the same order
CANDIDATES = 3  # sources per submission whose coverage is measured: those holding most of its fingerprints
TIE = 0.05  # sources this close to the best are named with it: minGPT's attention is nanoGPT's but for a line
FLOOR = 12  # fewer fingerprints than this (a few lines) cannot make a full match
TOKEN_FLOOR = 40  # likewise in tokens, for the coverage
COMMON = 0.1  # of the class, and at least COMMON_MIN submissions
COMMON_MIN = 10
GAP = 2  # times K + WINDOW: the most tokens between two matches of one region (a changed line does not split it)


@dataclass(frozen=True)
class Span:
    part: int
    first: int  # lines, 1-based, inclusive
    last: int


@dataclass(frozen=True)
class Region:
    a: tuple[Span, ...]
    b: tuple[Span, ...]


@dataclass(frozen=True)
class Pair:
    a: str  # a < b
    b: str
    score: float  # rounded to 2 decimals: what the files show is what they are sorted by
    regions: tuple[Region, ...]

    @property
    def shared_lines(self) -> int:
        """Lines matched, as MOSS counts them: the lines of the shared regions, on the side with more."""
        return max(_line_count(r.a for r in self.regions), _line_count(r.b for r in self.regions))


@dataclass(frozen=True)
class Trace:
    submission: str
    source: Source
    score: float
    tied: tuple[str, ...] = ()  # other sources that hold about as much of its code (within TIE)

    @property
    def named(self) -> str:
        return " or ".join((self.source.name, *self.tied))


def kept(p: Prints, ignore: frozenset[int]) -> set[int]:
    return set(p.selected) - ignore


def pairs(prints: dict[str, Prints], ignore: frozenset[int] = frozenset(),
          threshold: float | None = None) -> list[Pair]:
    """Pairs scoring `threshold` (SIMILAR) or more, by descending score then name."""
    threshold = SIMILAR if threshold is None else threshold
    own = {name: kept(p, ignore) for name, p in prints.items()}
    holders: dict[int, list[str]] = {}
    for name in sorted(own):
        for h in own[name]:
            holders.setdefault(h, []).append(name)
    common = max(COMMON_MIN, int(COMMON * len(prints)))
    shared: dict[tuple[str, str], int] = {}
    for names in holders.values():
        if 2 <= len(names) <= common:
            for ab in itertools.combinations(names, 2):
                shared[ab] = shared.get(ab, 0) + 1
    for h in [h for h, names in holders.items() if len(names) > common]:  # the course's way: no one's own
        for name in holders[h]:
            own[name].discard(h)
    found = []
    for (a, b), n in shared.items():
        score = round(n / max(min(len(own[a]), len(own[b])), FLOOR), 2)
        if score >= threshold:
            found.append(Pair(a, b, min(score, 1.0), regions(prints[a], prints[b], own[a] & own[b])))
    return sorted(found, key=lambda p: (-p.score, p.a, p.b))


def traces(prints: dict[str, Prints], sources: list[Source], ignore: frozenset[int] = frozenset(),
           threshold: float | None = None) -> list[Trace]:
    """Each submission's best source, when `threshold` of its tokens lie in long runs found there (coverage); by
    descending score then name. The sources holding most of its fingerprints are the candidates (an index, as for
    the pairs: a teacher's folder of last year's class costs no more than its fingerprints)."""
    threshold = TRACED if threshold is None else threshold
    holders: dict[int, list[int]] = {}
    for i, s in enumerate(sources):
        for h in s.kgrams:
            holders.setdefault(h, []).append(i)
    found = []
    for name in sorted(prints):
        counts: dict[int, int] = {}
        for h in kept(prints[name], ignore):
            for i in holders.get(h, ()):
                counts[i] = counts.get(i, 0) + 1
        candidates = sorted(counts, key=lambda i: (-counts[i], sources[i].name))[:CANDIDATES]
        scored = sorted(((coverage(prints[name], sources[i].kgrams, ignore), sources[i].name, i) for i in candidates),
                        key=lambda x: (-x[0], x[1]))
        if scored and scored[0][0] >= threshold:
            tied = tuple(n for score, n, _ in scored[1:] if score >= scored[0][0] - TIE)
            found.append(Trace(name, sources[scored[0][2]], scored[0][0], tied))
    return sorted(found, key=lambda t: (-t.score, t.submission))


def coverage(p: Prints, kgrams: frozenset[int], ignore: frozenset[int] = frozenset()) -> float:
    """The share of p's tokens that lie in a run of at least MIN_RUN tokens whose every k-gram is in `kgrams`,
    counting only the k-grams that are no idiom (rounded to 2 decimals). Independent code meets a source in
    short runs (a line of the same maths); a copy in long ones, which renaming does not break."""
    k = winnow.K
    covered: set[int] = set()
    i, n = 0, len(p.hashes)
    while i < n:
        if p.hashes[i] not in kgrams:
            i += 1
            continue
        j = i
        while j + 1 < n and p.hashes[j + 1] in kgrams:
            j += 1
        if j - i + k >= MIN_RUN:
            for x in range(i, j + 1):
                if p.hashes[x] not in ignore:
                    covered.update(range(x, x + k))
        i = j + 1
    return round(min(1.0, len(covered) / max(len(p.tokens), TOKEN_FLOOR)), 2)


def regions(a: Prints, b: Prints, hashes: set[int]) -> tuple[Region, ...]:
    """The stretches where a and b share fingerprints, in a's order: matches chained while both sides advance by
    at most GAP * (K + WINDOW) tokens (a reordered definition is a region of its own), chains that overlap on
    both sides merged, and a lone shared fingerprint (a line or less) left out where longer ones exist."""
    matches = sorted((i, j) for h in hashes for i in a.selected[h] for j in b.selected[h])
    gap = GAP * (winnow.K + winnow.WINDOW)
    chains: list[list[tuple[int, int]]] = []
    for i, j in matches:
        near = [c for c in chains if 0 < i - c[-1][0] <= gap and 0 < j - c[-1][1] <= gap]
        if near:
            min(near, key=lambda c: j - c[-1][1]).append((i, j))
        else:
            chains.append([(i, j)])
    if any(len(c) > 1 for c in chains):
        chains = [c for c in chains if len(c) > 1]
    k = winnow.K
    boxes = sorted((c[0][0], c[-1][0] + k - 1, min(j for _, j in c), max(j for _, j in c) + k - 1) for c in chains)
    merged: list[list[int]] = []
    for a0, a1, b0, b1 in boxes:  # token ranges on each side
        same = next((m for m in merged if a0 <= m[1] and m[0] <= a1 and b0 <= m[3] and m[2] <= b1), None)
        if same:
            same[:] = [min(same[0], a0), max(same[1], a1), min(same[2], b0), max(same[3], b1)]
        else:
            merged.append([a0, a1, b0, b1])
    return tuple(Region(_spans(a, a0, a1), _spans(b, b0, b1)) for a0, a1, b0, b1 in sorted(merged))


def _spans(p: Prints, start: int, end: int) -> tuple[Span, ...]:
    """The lines tokens start..end (inclusive) lie on, one span per part."""
    lines: dict[int, list[int]] = {}
    for t in p.tokens[start:min(end, len(p.tokens) - 1) + 1]:
        lines.setdefault(t.part, []).append(t.line)
    return tuple(Span(part, min(ls), max(ls)) for part, ls in sorted(lines.items()))


def _line_count(spans) -> int:
    return len({(s.part, line) for group in spans for s in group for line in range(s.first, s.last + 1)})
