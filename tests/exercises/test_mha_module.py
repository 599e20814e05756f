"""mha_module beyond the matrix: a layer whose constructor or weights have no usual names. The checks that need no
weights still run, the others say which parameters the layer has and how a rubric names them; with the rubric's
`[conventions]` naming them, the same layer gets full marks."""

import os
import re
from pathlib import Path

import pytest

from conftest import failed

ROOT = Path(__file__).resolve().parents[2]

HEAD = """import math
import torch
from torch import nn


def causal(x, q, k, v, h):
    B, T, C = x.shape
    q, k, v = (t.view(B, T, h, C // h).transpose(1, 2) for t in (q, k, v))
    att = (q @ k.transpose(-2, -1)) / math.sqrt(C // h)
    att = att.masked_fill(~torch.ones(T, T, dtype=torch.bool, device=x.device).tril(), float("-inf"))
    return (att.softmax(-1) @ v).transpose(1, 2).reshape(B, T, C)
"""

ODD_CONSTRUCTOR = HEAD + """

class Block(nn.Module):
    def __init__(self, emb, nh):
        super().__init__()
        self.nh = nh
        self.c_attn = nn.Linear(emb, 3 * emb)
        self.c_proj = nn.Linear(emb, emb)

    def forward(self, x):
        q, k, v = self.c_attn(x).split(x.shape[-1], dim=-1)
        return self.c_proj(causal(x, q, k, v, self.nh))
"""

ODD_WEIGHTS = HEAD + """

class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.a, self.b, self.c, self.d = (nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, x):
        return self.d(causal(x, self.a(x), self.b(x), self.c(x), self.h))
"""

WEIGHTS = ", ".join(f"{n}.weight=w_{r}, {n}.bias=b_{r}" for n, r in zip("abcd", "qkvo"))
NEED_WEIGHTS = {"out_proj_once", "reference_match"}  # the others that set weights depend on these


def rubric(tmp_path, entry: str, params: str = "", weights: str = "") -> str:
    text = (ROOT / "rubrics" / "mha_module.toml").read_text()
    text = re.sub(r"entry_points = \[.*?\]  #[^\n]*\n", f'entry_points = ["{entry}"]\n', text, flags=re.S)
    text = text.replace('params = ""', f'params = "{params}"').replace('weights = ""', f'weights = "{weights}"')
    path = tmp_path / f"{entry}-{bool(params)}-{bool(weights)}.toml"
    path.write_text(text)
    return str(path)


def graded(grade_of, tmp_path, code: str, rubric_path: str):
    sub = tmp_path / "attention.py"
    sub.write_text(code)
    return grade_of(sub, rubric_path)


def test_a_constructor_of_unusual_names_is_named_with_how_a_rubric_maps_it(grade_of, tmp_path):
    grade = graded(grade_of, tmp_path, ODD_CONSTRUCTOR, rubric(tmp_path, "Block"))
    shape = next(o for o in grade.outcomes if o.id == "output_shape")
    assert "failed" == shape.status and grade.score == 0
    assert "Block(emb, nh)" in shape.message and 'params = "emb=width"' in shape.message


def test_the_rubric_naming_the_constructors_parameters_gives_full_marks(grade_of, tmp_path):
    grade = graded(grade_of, tmp_path, ODD_CONSTRUCTOR, rubric(tmp_path, "Block", params="emb=width, nh=heads"))
    assert failed(grade) == set() and grade.score == grade.max_score


def test_weights_of_unusual_names_fail_only_the_checks_that_set_them(grade_of, tmp_path):
    grade = graded(grade_of, tmp_path, ODD_WEIGHTS, rubric(tmp_path, "CausalSelfAttention"))
    assert failed(grade) == NEED_WEIGHTS
    for o in grade.outcomes:
        if o.id in NEED_WEIGHTS:
            assert "a.weight [8, 8]" in o.message and "[conventions] weights =" in o.message
    passed = {o.id for o in grade.outcomes if o.status == "passed"}
    assert {"future_invariance", "batch_independence", "eval_deterministic", "device_placement"} <= passed


@pytest.mark.parametrize("weights", [WEIGHTS])
def test_the_rubric_naming_the_weights_gives_full_marks(grade_of, tmp_path, weights):
    grade = graded(grade_of, tmp_path, ODD_WEIGHTS, rubric(tmp_path, "CausalSelfAttention", weights=weights))
    assert failed(grade) == set() and grade.score == grade.max_score


# -- replay: the class built, given the weights and called as the grader did ------------------------------------------
MODULES = ROOT / "submissions" / "mha_module"


def test_the_replay_snippet_builds_the_class_and_runs_beside_the_file(tmp_path):
    """`replay` of a class prints Python that runs: the import from the student's file, the constructor call with
    the grader's arguments (nanoGPT's config with the attributes it reads), the weights copied into the parameters
    that took them, the call in eval(); not a pseudo-call `CausalSelfAttention(x, w_q, ..., heads=2)`."""
    import subprocess
    import sys

    sample = MODULES / "bug_scale_by_d_model.py"
    run = subprocess.run([sys.executable, "-m", "grader.frontends.cli", "replay", str(sample), "--check",
                          "sqrt_scaling", "--rubric", "mha_module"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stderr
    snippet = run.stdout.split("run it):\n", 1)[1].split("\n\n", 1)[0]
    assert "# result = " not in snippet and "from bug_scale_by_d_model import CausalSelfAttention" in snippet
    assert "layer = CausalSelfAttention(config=config)" in snippet and "layer.c_attn.weight.copy_(torch.cat([w_q, w_k, w_v]))" in snippet
    before = float(re.search(r"before it was (-?[\d.]+)", run.stdout).group(1))  # the failure's out[0, 1, 0]
    script = tmp_path / "replay.py"
    script.write_text(snippet + "\nprint(float(result[0, 1, 0]))\n")
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(MODULES)})
    assert ran.returncode == 0, ran.stderr
    assert float(ran.stdout) == pytest.approx(before, abs=1e-4)


# every way a sample's class is built and given its weights: a config read as attributes (nanoGPT, CS224N) or as a
# mapping (minGPT's CfgNode), keyword arguments (Raschka's, one head without W_O too), the file's globals
# (ng-video-lecture: one Linear per head), separate q, k, v, nn.MultiheadAttention's fused in_proj
BUILDS = ["correct_nanogpt_style.py", "limited_cs224n.py", "limited_mingpt.py", "limited_rasbt_multihead.py",
          "limited_rasbt_causal_attention.py", "limited_karpathy_multihead.py", "correct_separate_qkv.py",
          "correct_torch_mha_wrapper.py", "correct_einops.py"]


def test_the_replay_snippet_gives_what_the_worker_gave_for_every_build(tmp_path):
    import subprocess
    import sys

    import torch

    from grader.checks.failure import Case
    from grader.exercises.module_inputs import weights
    from grader.frontends import replay
    from grader.grading.engine import Grading
    from grader.grading.outcome import Status
    from grader.grading.rubric import load

    rubric, runs = load("mha_module"), []
    for i, name in enumerate(BUILDS):
        grading = Grading(MODULES / name, rubric)
        try:
            assert grading.outcome("loads").status is Status.PASSED, name
            assert grading.subject is not None
            probe = grading.subject.describe(8)
            g = torch.Generator().manual_seed(i)
            x = torch.randn(2, 3, 4, generator=g, dtype=torch.float64)
            args = (x, *weights(g, 4, probe["present"], torch.float64))
            kw = {"heads": 2 if probe["heads"] else 1, "context": 8, "dropout": 0.1}
            out = grading.subject.call(*args, expect=grading.exercise.expect(*args, **kw), **kw)[0]
            case = Case(args, kw, grading.exercise.inputs)
            lines = replay.built(replay.described(grading, case), case, replay.importable(grading.source, grading.path))
        finally:
            grading.close()
        assert lines is not None, name
        runs.append((name, "\n".join(lines), out))
    script = ("import sys, torch\nfound = []\nfor code in sys.argv[1:]:\n    ns = {}\n    exec(code, ns)\n"
              "    found.append(ns['result'])\ntorch.save(found, 'results.pt')\n")
    ran = subprocess.run([sys.executable, "-c", script, *(code for _, code, _ in runs)], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(MODULES)})
    assert ran.returncode == 0, ran.stderr
    for (name, code, out), got in zip(runs, torch.load(tmp_path / "results.pt")):
        assert torch.allclose(got, out, rtol=1e-10, atol=1e-12), f"{name}:\n{code}"
