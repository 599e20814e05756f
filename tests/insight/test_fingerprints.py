"""Fingerprints of normalized tokens, on texts: what a copy changes (names, layout, comments, type hints, the order
of definitions) changes nothing, what a solution is (its library calls) stays, winnowing keeps its guarantee, and
the public corpus is fingerprints only, built with today's tokenizer."""

import json
import random
import re
from importlib import resources

from grader.insight import corpus, similarity, tokens, winnow

ORIGINAL = '''
import math
import torch


def attention(q, k, v, causal=True):
    """Causal attention."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if causal:
        future = torch.ones(q.size(-2), q.size(-2), dtype=torch.bool).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
'''
DISGUISED = '''
import torch  # the imports in another order
import math

def my_attn(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, is_causal: bool = True) -> tuple:
    # a comment of my own
    s = query @ key.transpose(-2, -1) / math.sqrt(
        query.size(-1)
    )
    if is_causal:
        ahead: torch.Tensor = torch.ones(
            query.size(-2),
            query.size(-2),
            dtype=torch.bool,
        ).triu(1)
        s = s.masked_fill(ahead, float('-inf'))  # ' or "
    p = torch.softmax(s, dim=-1)
    return p @ value, p
'''


def texts(code: str) -> list[str]:
    return [t.text for t in tokens.normalized(code)]


def prints(code: str, starter: winnow.Starter = winnow.NO_STARTER) -> winnow.Prints:
    return winnow.fingerprint(tokens.normalized(code), starter)


def score(a: str, b: str, **kw) -> float:
    found = similarity.pairs({"a": prints(a), "b": prints(b)}, threshold=0.0, **kw)
    return found[0].score if found else 0.0


def test_renaming_reformatting_comments_imports_and_type_hints_change_no_token():
    assert texts(ORIGINAL) == texts(DISGUISED)
    assert score(ORIGINAL, DISGUISED) == 1.0


def test_library_calls_stay_and_make_the_difference():
    other = ORIGINAL.replace("torch.softmax(scores, dim=-1)", "torch.log_softmax(scores, dim=-1).exp()")
    assert "softmax" in texts(ORIGINAL) and "log_softmax" in texts(other)
    assert texts(ORIGINAL) != texts(other)
    alias = "import torch.nn.functional as F\nx = F.softmax(y, dim=-1)\n"
    assert texts(alias) == ["V", "=", "V", ".", "softmax", "(", "y", ",", "dim", "=", "-", "1", ")"]


def test_reordered_definitions_keep_their_fingerprints():
    helper = ("\n\ndef stable(x):\n    x = x - x.amax(dim=-1, keepdim=True)\n    e = x.exp()\n"
              "    return e / e.sum(dim=-1, keepdim=True)\n")
    first, second = ORIGINAL + helper, helper + ORIGINAL.replace("import math\nimport torch\n", "")
    assert score(first, second) >= 0.9
    assert score(ORIGINAL, helper) < similarity.SIMILAR


STARTER = """
def causal_mask(t, device=None):
    return torch.ones(t, t, dtype=torch.bool, device=device).tril()


def attention(q, k, v, causal=True):
    raise NotImplementedError  # your code here


if __name__ == "__main__":
    q, k, v = torch.randn(2, 4, 8), torch.randn(2, 4, 8), torch.randn(2, 4, 8)
    out, weights = attention(q, k, v)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 4)) and torch.all(weights.triu(1) == 0)
"""


def test_starter_lines_never_count():
    body = "    raise NotImplementedError  # your code here\n"
    mine = STARTER.replace(body, "    s = torch.einsum('...id,...jd->...ij', q, k) * q.shape[-1] ** -0.5\n"
                                 "    s = torch.where(causal_mask(q.shape[-2]), s, float('-inf'))\n"
                                 "    return s.softmax(-1) @ v, s.softmax(-1)\n")
    theirs = STARTER.replace(body, "    w = (q @ k.transpose(-1, -2)).div(k.size(-1) ** 0.5)\n"
                                   "    w = w.masked_fill(~causal_mask(w.size(-1)), -1e9).softmax(-1)\n"
                                   "    return w @ v, w\n")
    given = winnow.Starter.of(tokens.normalized(STARTER))
    assert score(mine, theirs) >= similarity.SIMILAR  # the template alone makes them look alike
    assert similarity.pairs({"a": prints(mine, given), "b": prints(theirs, given)}, threshold=0.0) == []
    assert {t.line for t in prints(mine, given).tokens} == {7, 8, 9}  # the starter's lines are gone
    reformatted = STARTER.replace("torch.ones(t, t, dtype=torch.bool, device=device)",
                                  "torch.ones(\n t, t,\n dtype=torch.bool, device=device,\n)")
    assert prints(reformatted, given).selected == {}  # reformatted, its k-grams are still the starter's


def test_winnowing_finds_every_shared_run_of_k_plus_window_minus_one_tokens():
    rng = random.Random(0)
    words = [f"t{i}" for i in range(30)]
    for _ in range(200):
        common = rng.choices(words, k=winnow.K + winnow.WINDOW - 1)
        a = rng.choices(words, k=rng.randint(0, 40)) + common + rng.choices(words, k=rng.randint(0, 40))
        b = rng.choices(words, k=rng.randint(0, 40)) + common + rng.choices(words, k=rng.randint(0, 40))
        ha, hb = winnow.kgrams(a), winnow.kgrams(b)
        assert {ha[i] for i in winnow.winnow(ha)} & {hb[i] for i in winnow.winnow(hb)}


def test_winnowing_keeps_about_two_in_window_plus_one():
    hashes = winnow.kgrams([f"t{i % 97}" for i in range(5000)])
    density = len(winnow.winnow(hashes)) / len(hashes)
    assert 0.8 * 2 / (winnow.WINDOW + 1) < density < 1.2 * 2 / (winnow.WINDOW + 1)


def test_code_that_does_not_parse_is_still_compared():
    broken = ORIGINAL.replace("if causal:", "if causal")
    assert score(ORIGINAL, broken) >= similarity.SIMILAR


def test_hashes_are_the_same_in_every_process_and_the_corpus_is_current():
    # blake2b, not hash(): a change here changes every shipped fingerprint (rebuild: tools/public_fingerprints.py)
    assert winnow.kgrams(["V", "=", "V", "@", "V", ".", "transpose", "("])[0] == 0xD702A632A7C74036
    assert corpus.public()  # StaleCorpus when public.json was built with another tokenizer or K, WINDOW


def test_public_corpus_is_fingerprints_only():
    text = resources.files("grader.insight").joinpath(corpus.PUBLIC).read_text()
    for code in ("dim=-1", "float(", "transpose(", "softmax(", "return "):
        assert code not in text
    data = json.loads(text)
    names = " ".join(s["name"] for s in data["sources"])
    for source in ("nanoGPT", "minGPT", "GPT-2", "Raschka", "lecture", "d2l", "Annotated", "course text"):
        assert source in names
    for s in data["sources"]:
        assert set(s) == {"name", "what", "url", "lines", "kgrams"} and s["lines"] > 0
        assert re.fullmatch(r"[0-9a-f]{16}( [0-9a-f]{16})*", s["kgrams"])
        assert s["url"].startswith("https://") or s["name"].startswith("course text")
