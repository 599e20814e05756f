"""mha_module beyond the matrix: a layer whose constructor or weights have no usual names. The checks that need no
weights still run, the others say which parameters the layer has and how a rubric names them; with the rubric's
`[conventions]` naming them, the same layer gets full marks."""

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
