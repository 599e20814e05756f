"""What a submission may come from: well-known public implementations, shipped as fingerprints only (public.json:
k-gram hashes, line counts, where the code is; never the code), and the folders a teacher adds (--compare-with:
last year's class, known solutions).

public.json is built by tools/public_fingerprints.py from the public repositories at the commits it names; its
scheme (K, WINDOW and a canary's hashes) must be this module's, else its hashes mean nothing here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from grader.insight import texts, tokens, winnow
from grader.submission.reading import Reading
from grader.submission.source import TooDeep

PUBLIC = "public.json"
IDIOM_SOURCES = 3  # a k-gram found in this many independent public implementations is how attention is written
# Fingerprinted with every build of public.json: a change to the tokens or the hashing changes its hashes.
CANARY = ('import torch.nn.functional as F\n\n\ndef attention(q: "Tensor", k, v, dim=-1):\n    """Attention."""\n'
          '    w = F.softmax(q @ k.transpose(-2, -1) / q.size(-1) ** 0.5, dim=dim)  # weights\n'
          '    return w @ v, w\n')
NOT_SUBMISSIONS = ("README", "readme")


class StaleCorpus(Exception):
    """public.json was built with another tokenizer or hashing: rebuild it (tools/public_fingerprints.py)."""


@dataclass(frozen=True)
class Source:
    name: str  # "karpathy/nanoGPT", or a teacher's "lastyear/alice.py"
    what: str  # which code: "model.py: CausalSelfAttention"
    url: str  # where to read it ("" for a teacher's folder)
    lines: int
    kgrams: frozenset[int]
    public: bool = True


def scheme() -> dict:
    """What the shipped hashes depend on."""
    canary = winnow.kgrams([t.text for t in tokens.normalized(CANARY)])
    return {"k": winnow.K, "window": winnow.WINDOW, "canary": " ".join(f"{h:016x}" for h in canary)}


def public() -> list[Source]:
    data = json.loads(resources.files("grader.insight").joinpath(PUBLIC).read_text(encoding="utf-8"))
    if data["scheme"] != scheme():
        raise StaleCorpus(f"grader/insight/{PUBLIC} was built with another tokenizer; run tools/public_fingerprints.py")
    return [Source(s["name"], s["what"], s["url"], s["lines"], frozenset(int(h, 16) for h in s["kgrams"].split()))
            for s in data["sources"]]


def idioms(sources: list[Source]) -> frozenset[int]:
    """k-grams that IDIOM_SOURCES or more public implementations share: evidence of nothing but the maths."""
    seen: dict[int, int] = {}
    for s in sources:
        if s.public:
            for h in s.kgrams:
                seen[h] = seen.get(h, 0) + 1
    return frozenset(h for h, n in seen.items() if n >= IDIOM_SOURCES)


def children(folder: Path) -> list[Path]:
    """A folder's submissions as the batch command lists them: .py files, notebooks and folders, sorted, notes
    (README) and names starting with `.` or `_` left out. OSError when it cannot be listed."""
    return [c for c in sorted(folder.iterdir())
            if not c.name.startswith((".", "_", *NOT_SUBMISSIONS)) and (c.is_dir() or c.suffix in (".py", ".ipynb"))]


def folder_sources(folder: Path, reading: Reading = Reading()) -> list[Source]:
    """Each submission in a teacher's folder, a source named by the folder as given and its own name."""
    found = []
    kids = children(folder)
    read = texts.read_all({c.name: c for c in kids}, reading)
    for child in kids:
        text = read[child.name]
        if text is None:
            continue
        try:
            toks = text_tokens(text)
        except TooDeep:  # nested deeper than Python's parser goes: nothing to trace to
            continue
        found.append(Source(f"{folder.as_posix().rstrip('/')}/{child.name}", "", "", _line_count(text),
                            frozenset(winnow.kgrams([t.text for t in toks])), public=False))
    return found


def text_tokens(text: texts.Text) -> list[tokens.Token]:
    """A text's normalized tokens, part after part; a name chosen in one part is the author's in every part."""
    chosen = tokens.chosen_names([code for _, code in text.parts]) if len(text.parts) > 1 else None
    return [t for i, (_, code) in enumerate(text.parts) for t in tokens.normalized(code, i, chosen)]


def entry(name: str, what: str, url: str, code: str) -> dict:
    """One public source as public.json holds it (tools/public_fingerprints.py): fingerprints and no code."""
    hashes = winnow.kgrams([t.text for t in tokens.normalized(code)])
    return {"name": name, "what": what, "url": url, "lines": len(code.strip().splitlines()),
            "kgrams": " ".join(sorted(f"{h:016x}" for h in set(hashes)))}


def _line_count(text: texts.Text) -> int:
    return sum(len(code.strip().splitlines()) for _, code in text.parts)
