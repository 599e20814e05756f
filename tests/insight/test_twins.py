"""Behaviour twins: the diagnosis probes' wrong answers as a digest (diagnosis.behaviour), the same for one bug
however it is written (float noise included), different for different bugs, none for right or random answers;
insight.twins groups the grades that share one."""

import math

import torch

from grader.exercises import EXERCISES
from grader.grading import diagnosis as D
from grader.grading.outcome import Grade
from grader.insight.twins import twins

V = EXERCISES["chapter5"].variants


def zero_fill_by_masked_fill(q, k, v, causal=True):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        s = s.masked_fill(torch.ones(s.shape[-1], s.shape[-1], dtype=torch.bool).triu(1), 0.0)
    w = torch.softmax(s, dim=-1)
    return w @ v, w


def zero_fill_by_multiplying(q, k, v, causal=True):  # another order of operations: other float32 roundings
    s = torch.matmul(q * q.shape[-1] ** -0.5, k.transpose(-1, -2))
    if causal:
        s = s * torch.ones(s.shape[-1], s.shape[-1]).tril()
    e = (s - s.amax(-1, keepdim=True)).exp()
    w = e / e.sum(-1, keepdim=True)
    return torch.einsum("...ij,...jd->...id", w, v), w


def softmax_twice(q, k, v, causal=True):
    out, w = V.plant(q, k, v, causal)
    w = w.softmax(-1)
    return w @ v, w


def behaviour(student) -> str:
    probes = V.probes()
    return D.behaviour(V, probes, [student(*args, **kw) for args, kw in probes])


def test_one_bug_written_two_ways_has_one_behaviour():
    found = D.examine(V, zero_fill_by_masked_fill)
    assert found.mistakes == ["zero fill"]
    assert found.behaviour and found.behaviour == behaviour(zero_fill_by_multiplying)
    assert any(not torch.equal(x, y) for x, y in zip(zero_fill_by_masked_fill(*V.probes()[0][0]),
                                                   zero_fill_by_multiplying(*V.probes()[0][0])))  # not bit-equal


def test_different_bugs_differ_and_an_unknown_bug_has_a_behaviour_too():
    known = {behaviour(lambda q, k, v, causal=True, b=name: V.plant(q, k, v, causal, bugs=frozenset([b])))
             for name in V.mistakes}
    assert len(known) == len(V.mistakes) and "" not in known
    assert behaviour(softmax_twice) not in known | {""}


def test_right_random_and_silent_answers_have_no_behaviour():
    assert behaviour(lambda q, k, v, causal=True: V.plant(q, k, v, causal)) == ""
    noisy = lambda q, k, v, causal=True: (torch.rand_like(q), torch.rand(*q.shape[:-1], q.shape[-2]))  # noqa: E731
    assert D.examine(V, noisy) == D.Diagnosis([D.RANDOM])
    assert D.examine(V, lambda *a, **kw: 1 / 0).behaviour == ""


def grade(name: str, behaviour: str, diagnosis: list[str]) -> Grade:
    return Grade(name, "chapter5", [], 50.0, 100.0, diagnosis=diagnosis, behaviour=behaviour)


def test_twins_are_groups_of_two_or_more_largest_first():
    grades = [grade("a.py", "x", ["zero fill"]), grade("b.py", "y", [D.UNRECOGNISED]),
              grade("c.py", "x", ["zero fill"]), grade("d.py", "y", [D.UNRECOGNISED]),
              grade("e.py", "y", [D.UNRECOGNISED]), grade("f.py", "z", ["no mask"]), grade("g.py", "", []),
              grade("h.py", "", [])]
    found = twins(grades)
    assert [(t.members, t.mistake) for t in found] == [(("b.py", "d.py", "e.py"), D.UNRECOGNISED),
                                                       (("a.py", "c.py"), "zero fill")]
