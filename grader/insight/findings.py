"""The class insight in one call: read every submission's text, fingerprint it (the starter's lines left out), find
the similar pairs, trace each submission to a public source or a teacher's folder, and group behaviour twins."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from grader.grading.outcome import Grade
from grader.insight import corpus, similarity, texts, twins, winnow
from grader.submission.reading import Reading
from grader.submission.source import TooDeep


@dataclass(frozen=True)
class Findings:
    texts: dict[str, texts.Text]  # the submissions that have text to compare (the pages show their regions)
    pairs: list[similarity.Pair]
    traces: list[similarity.Trace]
    twins: list[twins.Twins]
    sources: list[corpus.Source] = field(default_factory=list)  # what the traces were looked for in
    unread: dict[str, str] = field(default_factory=dict)  # submissions with text but no fingerprint: why not


def examine(subs: dict[str, Path], grades: list[Grade], starters: Sequence[Path] = (), compare_with: Sequence[Path] = (),
            reading: Reading = Reading()) -> Findings:
    read = {name: t for name, t in texts.read_all(subs, reading).items() if t is not None}
    given = texts.read_all({f"starter {i}": path for i, path in enumerate(starters)}, reading)
    starter = winnow.Starter.of([tok for t in given.values() for tok in _tokens(t)])
    prints, unread = {}, {}
    for name, text in read.items():
        try:
            prints[name] = winnow.fingerprint(corpus.text_tokens(text), starter)
        except TooDeep:  # its grade says so too (the `loads` check); the rest of the class is compared as ever
            unread[name] = "too deeply nested to read"
    read = {name: t for name, t in read.items() if name in prints}
    sources = corpus.public() + [s for folder in compare_with for s in corpus.folder_sources(folder, reading)]
    ignore = corpus.idioms(sources)
    return Findings(read, similarity.pairs(prints, ignore), similarity.traces(prints, sources, ignore),
                    twins.twins(grades), sources, unread)


def _tokens(text: texts.Text | None):
    try:
        return corpus.text_tokens(text) if text is not None else []
    except TooDeep:  # a starter no parser can read leaves nothing out
        return []
