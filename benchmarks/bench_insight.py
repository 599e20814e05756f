"""The class insight's cost for a large class: read, fingerprint, pair, trace and report N synthetic submissions.

    python benchmarks/bench_insight.py [--sizes 250 500 1000 2000] [--repeat 3]

Each submission is the course's starter with a body put together at random from common ways of writing each step
(scores, mask, softmax, output: 432 combinations), up to four extra statements among them, helpers and comments,
and names of its own; one in twenty is a near-copy of another (renamed, commented). Grades are made up, with a
behaviour digest for one in five (twins). The time is what `attention-grader grade` spends on its class insight
beside grading (findings.examine and the four files), the median of --repeat runs.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.grading.outcome import Grade, Outcome, Status  # noqa: E402
from grader.insight import corpus, findings, similarity  # noqa: E402
from grader.reports import class_files, class_page  # noqa: E402

STARTER = ROOT / "submissions" / "class_insight" / "_starter.py"
SCORES = [
    "{s} = {q} @ {k}.transpose(-2, -1) / math.sqrt({q}.size(-1))",
    "{s} = torch.matmul({q}, {k}.transpose(-1, -2)) * {q}.shape[-1] ** -0.5",
    "{s} = torch.einsum('...id,...jd->...ij', {q}, {k}) / {q}.shape[-1] ** 0.5",
    "{h} = {q}.size(-1)\n    {s} = ({q} @ {k}.mT) / math.sqrt({h})",
    "{s} = {q}.matmul({k}.transpose(-2, -1)).div(math.sqrt({k}.shape[-1]))",
    "{s} = ({q}.unsqueeze(-2) * {k}.unsqueeze(-3)).sum(-1) / {q}.shape[-1] ** 0.5",
]
MASKS = [
    ("{t} = {q}.size(-2)\n    {m} = torch.tril(torch.ones({t}, {t}, dtype=torch.bool, device={q}.device))\n"
     "    {s} = {s}.masked_fill(~{m}, float('-inf'))"),
    ("{m} = torch.ones({s}.shape[-2:], dtype=torch.bool, device={s}.device).triu(1)\n"
     "    {s} = {s}.masked_fill({m}, -1e9)"),
    ("{t} = {s}.shape[-1]\n    {m} = torch.arange({t}, device={s}.device)\n"
     "    {s} = torch.where({m}[None, :] <= {m}[:, None], {s}, float('-inf'))"),
    "{m} = torch.full({s}.shape[-2:], float('-inf'), device={s}.device).triu(1)\n    {s} = {s} + {m}",
    "{s} = {s}.masked_fill(torch.ones_like({s}, dtype=torch.bool).triu(1), torch.finfo({s}.dtype).min)",
    "{t} = {q}.shape[-2]\n    for {i} in range({t}):\n        {s}[..., {i}, {i} + 1:] = float('-inf')",
]
SOFTMAX = [
    "{w} = torch.softmax({s}, dim=-1)",
    "{w} = torch.nn.functional.softmax({s}, dim=-1)",
    "{w} = {s}.softmax(-1)",
    "{w} = torch.exp({s} - {s}.amax(-1, keepdim=True))\n    {w} = {w} / {w}.sum(-1, keepdim=True)",
]
OUTPUT = [
    "return {w} @ {v}, {w}",
    "{o} = torch.matmul({w}, {v})\n    return {o}, {w}",
    "return torch.einsum('...ij,...jd->...id', {w}, {v}), {w}",
]
EXTRA = [
    "assert {q}.dim() >= 2, 'need [..., T, H]'",
    "{q} = {q}.contiguous()",
    "{k} = {k}.to({q}.dtype)",
    "if {q}.shape[-1] != {k}.shape[-1]:\n        raise ValueError('q and k differ in size')",
    "# step {n}: {word}",
    "{h} = {q}.shape[-1]",
    "{v} = {v}.to({q}.dtype)",
    "assert {q}.shape == {k}.shape",
    "if not causal:\n        pass",
    "{t} = {q}.shape[-2]",
    "{o} = None",
    "print({q}.shape)",
]
HELPERS = [
    ("def check_{name}():\n    x = torch.randn({a}, {b}, {c})\n    out, w = scaled_dot_product_attention(x, x, x)\n"
     "    assert out.shape == x.shape\n    print('{word}', w.sum(-1))\n"),
    ("def {name}(x, y={a}):\n    total = 0\n    for i in range(y):\n        total += (x * i).sum()\n"
     "    return total / {b}\n"),
    ("class {Name}:\n    def __init__(self, size={a}):\n        self.size = size\n        self.cache = {{}}\n\n"
     "    def get(self, n):\n        return self.cache.setdefault(n, torch.zeros(n, self.size + {b}))\n"),
]
WORDS = "alpha beta gamma delta query key value mask score weight out attn sim prob row col ctx mix".split()


def name(rng: random.Random) -> str:
    return rng.choice(WORDS) + rng.choice(["", "_", "2", "_t", "s", "_x"]) + rng.choice(["", str(rng.randint(0, 9))])


def student(rng: random.Random) -> tuple[str, list[str]]:
    """(the code, the names it chose)."""
    names = dict(q=name(rng) + "q", k=name(rng) + "k", v=name(rng) + "v", s=name(rng), h=name(rng), t=name(rng),
                 m=name(rng), w=name(rng), o=name(rng), i=rng.choice("ijn"))
    steps = [rng.choice(SCORES), rng.choice(MASKS), rng.choice(SOFTMAX), rng.choice(OUTPUT)]
    for _ in range(rng.randint(0, 4)):
        extra = rng.choice(EXTRA).replace("{n}", str(rng.randint(1, 9))).replace("{word}", rng.choice(WORDS))
        steps.insert(rng.randint(0, len(steps) - 1), extra)
    body = "\n    ".join(s.format(**names) for s in steps)
    signature = f"def scaled_dot_product_attention({names['q']}, {names['k']}, {names['v']}, causal: bool = True):"
    helpers = [rng.choice(HELPERS).format(name=name(rng), Name=name(rng).title().replace("_", ""), a=rng.randint(2, 9),
                                         b=rng.randint(2, 9), c=rng.randint(2, 9), word=rng.choice(WORDS))
               for _ in range(rng.randint(0, 2))]
    starter = STARTER.read_text()
    todo = "    # TODO: scores, the causal mask, softmax over the keys, the output\n    raise NotImplementedError\n"
    code = starter.replace("def scaled_dot_product_attention(q, k, v, causal: bool = True):\n", signature + "\n")
    return code.replace(todo, "    " + body + "\n\n\n" + "\n\n".join(helpers)), list(names.values())


def disguised(code: str, names: list[str]) -> str:
    """A near-copy: every chosen name renamed, a comment added to every other line."""
    code = re.sub(r"\b(" + "|".join(map(re.escape, names)) + r")\b", lambda m: "z_" + m[1][::-1], code)
    lines = [line + ("  # mine" if i % 2 and line.strip() and '"""' not in line else "")
             for i, line in enumerate(code.splitlines())]
    return "\n".join(lines) + "\n"


def make_class(folder: Path, n: int, seed: int = 0) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    texts, planted = {}, []
    for i in range(n):
        if i > 10 and i % 20 == 0:
            original = rng.choice([f for f, (_, names) in texts.items() if names])  # not a copy itself
            texts[f"s{i:05d}.py"] = (disguised(*texts[original]), [])
            planted.append((original, f"s{i:05d}.py"))
        else:
            texts[f"s{i:05d}.py"] = student(rng)
    for file, (text, _) in texts.items():
        (folder / file).write_text(text)
    return planted


def grades(names: list[str], rng: random.Random) -> list[Grade]:
    found = []
    for n in names:
        wrong = rng.random() < 0.2
        outcome = Outcome("future_weights_zero", "t", Status.FAILED if wrong else Status.PASSED, 0 if wrong else 10, 10)
        found.append(Grade(n, "chapter5", [outcome], 0 if wrong else 10, 10, diagnosis=["zero fill"] if wrong else [],
                           exercise="chapter5", behaviour=f"{rng.randrange(40):016x}" if wrong else ""))
    return found


def run(n: int, repeat: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-insight-") as scratch:
        folder, out = Path(scratch) / "class", Path(scratch) / "out"
        folder.mkdir()
        out.mkdir()
        planted = make_class(folder, n)
        subs = {c.name: c for c in corpus.children(folder)}
        marks = grades(list(subs), random.Random(1))
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            found = findings.examine(subs, marks, [STARTER])
            class_files.write(out, found)
            class_page.write(out, marks, ["future_weights_zero"], found)
            times.append(time.perf_counter() - start)
        listed = {(p.a, p.b) for p in found.pairs}
        return {"n": n, "seconds": statistics.median(times), "pairs": len(found.pairs), "planted": len(planted),
                "found": sum(p in listed for p in planted), "twins": len(found.twins)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[250, 500, 1000, 2000])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print("| submissions | class insight | per submission | pairs listed | planted pairs found | twin groups |")
    print("|---|---|---|---|---|---|")
    for n in args.sizes:
        r = run(n, args.repeat)
        print(f"| {r['n']} | {r['seconds']:.2f} s | {1000 * r['seconds'] / r['n']:.1f} ms | {r['pairs']} | "
              f"{r['found']}/{r['planted']} | {r['twins']} |", flush=True)
    print(f"(similar at {similarity.SIMILAR}, common above {similarity.COMMON:.0%} of the class)")


if __name__ == "__main__":
    main()
