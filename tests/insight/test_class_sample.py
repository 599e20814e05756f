"""The class insight on the planted class (submissions/class_insight, see its README), from the texts alone: every
planted near-copy ranks above every unrelated pair, the starter does not count, copies of public code and of last
year's class are traced to their source and original work to none. The chapter5 samples that wrap public code
(public_*, limited_*, bug_public_*, each naming its source in its header) are traced to that source."""

import itertools

import pytest

from conftest import CH5_DIR, SUBMISSIONS

from grader.insight import corpus, findings, similarity

CLASS = SUBMISSIONS / "class_insight"
STARTER = CLASS / "_starter.py"
LAST_YEAR = CLASS / "_last_year"
PLANTED = {("alice.py", "bob.py"), ("carol.py", "dave.py"), ("erin.py", "nina.ipynb"), ("frank.py", "peggy")}
TRACED = {  # submission -> the source it comes from (a prefix of the source's name)
    "grace.py": "karpathy/",  # nanoGPT's attention, which minGPT's is word for word
    "heidi.py": "Raschka",
    "mallory.py": f"{LAST_YEAR.as_posix()}/oscar.py",
}
WRAPPED = {
    "limited_nanogpt.py": "karpathy/", "limited_mingpt.py": "karpathy/", "limited_rasbt_causal.py": "Raschka",
    "limited_rasbt_multihead.py": "Raschka", "limited_d2l.py": "d2l",
    "public_annotated_transformer.py": "The Annotated",
    "limited_hf_gpt2.py": "HF transformers GPT-2", "bug_public_pytorch_docs.py": "PyTorch docs",
}


def members() -> dict:
    return {c.name: c for c in corpus.children(CLASS)}


@pytest.fixture(scope="module")
def every_pair():
    """All pairs of the class that share a fingerprint, whatever their score, with the starter given."""
    threshold, similarity.SIMILAR = similarity.SIMILAR, 0.0
    try:
        return findings.examine(members(), [], [STARTER], [LAST_YEAR])
    finally:
        similarity.SIMILAR = threshold


@pytest.fixture(scope="module")
def insight():
    return findings.examine(members(), [], [STARTER], [LAST_YEAR])


def test_the_class_is_what_the_readme_says():
    assert set(members()) == {a for pair in PLANTED for a in pair} | set(TRACED) | {
        "ivan.py", "judy.py", "kim.py", "leo.py"}


def test_each_planted_pair_ranks_above_every_unrelated_pair(every_pair):
    scores = {(p.a, p.b): p.score for p in every_pair.pairs}
    unrelated = [scores.get(ab, 0.0) for ab in itertools.combinations(sorted(members()), 2) if ab not in PLANTED]
    planted = [scores.get(ab, 0.0) for ab in PLANTED]
    assert min(planted) > max(unrelated), (sorted(scores.items(), key=lambda kv: -kv[1])[:8])
    assert min(planted) >= similarity.SIMILAR > max(unrelated)


def test_only_the_planted_pairs_are_listed_most_similar_first(insight):
    assert {(p.a, p.b) for p in insight.pairs} == PLANTED
    assert [p.score for p in insight.pairs] == sorted((p.score for p in insight.pairs), reverse=True)
    assert all(p.shared_lines >= 5 and p.regions for p in insight.pairs)


def test_shared_regions_point_at_the_copied_lines_and_never_at_the_starter(insight):
    pair = next(p for p in insight.pairs if (p.a, p.b) == ("alice.py", "bob.py"))
    alice, bob = insight.texts["alice.py"].lines(0), insight.texts["bob.py"].lines(0)
    shown_a = {alice[n - 1] for r in pair.regions for s in r.a for n in range(s.first, s.last + 1)}
    shown_b = {bob[n - 1] for r in pair.regions for s in r.b for n in range(s.first, s.last + 1)}
    assert any("masked_fill" in line for line in shown_a) and any("masked_fill" in line for line in shown_b)
    assert not any("__main__" in line or "torch.allclose" in line for line in shown_a | shown_b)


def test_the_starter_does_not_count():
    """Unrelated solutions that kept the template look alike without --starter (a class this small has no
    'common' fingerprints), and not with it."""
    three = {n: CLASS / n for n in ("alice.py", "erin.py", "ivan.py")}
    assert {(p.a, p.b) for p in findings.examine(three, []).pairs} == {("alice.py", "ivan.py"), ("erin.py", "ivan.py")}
    assert findings.examine(three, [], [STARTER]).pairs == []


def test_copies_of_public_code_and_of_last_year_are_traced_to_their_source(insight):
    traced = {t.submission: t.source.name for t in insight.traces}
    assert set(traced) == set(TRACED)
    for name, source in TRACED.items():
        assert traced[name].startswith(source), (name, traced[name])


def test_wrapped_public_samples_are_traced_to_the_source_their_header_names():
    subs = {n: CH5_DIR / n for n in WRAPPED}
    traced = {t.submission: t.source for t in findings.examine(subs, []).traces}
    assert set(traced) == set(WRAPPED)
    for name, source in WRAPPED.items():
        assert traced[name].name.startswith(source), (name, traced[name].name)
        assert traced[name].url.startswith("https://")
