"""masked_mha_module beyond the matrix: the padding mask reaches forward by the name and in the convention a rubric
declares ([conventions] padding, padding_name); a forward that takes no mask by a known name is told how a rubric
names it, and loses the padding checks alone."""

import re
from pathlib import Path

import pytest

from conftest import assert_full_marks, failed

ROOT = Path(__file__).resolve().parents[2]
PADDING_CHECKS = {"padding_keys_zero", "padded_rows_finite", "padding_invariance"}

LAYER = """import math
import torch
from torch import nn


class MaskedSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.q_proj, self.k_proj, self.v_proj, self.o_proj = (nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, x, {param}=None):
        B, T, C = x.shape
        q, k, v = (p(x).view(B, T, self.h, C // self.h).transpose(1, 2) for p in (self.q_proj, self.k_proj, self.v_proj))
        scores = q @ k.transpose(-2, -1) / math.sqrt(C // self.h)
        allowed = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()[None, None]
        if {param} is not None:
            {combine}
        w = torch.where(allowed, scores.masked_fill(~allowed, float("-inf")).softmax(-1), 0.0)
        return self.o_proj((w @ v).transpose(1, 2).reshape(B, T, C)), w
"""
REAL = "allowed = allowed & {param}[:, None, None, :].bool()"
TORCH = "allowed = allowed & ~{param}[:, None, None, :]"  # nn.MultiheadAttention's key_padding_mask: True = pad
ADDITIVE = "allowed = allowed & ({param}[:, None, None, :] == 0)"


def layer(param: str, combine: str) -> str:
    return LAYER.replace("{combine}", combine).replace("{param}", param)


def rubric(tmp_path, **conventions) -> str:
    text = (ROOT / "rubrics" / "masked_mha_module.toml").read_text()
    for name, value in conventions.items():
        text, n = re.subn(rf'^{name} = "[^"]*"', f'{name} = "{value}"', text, flags=re.M)
        assert n == 1, name
    path = tmp_path / ("rubric-" + "-".join(f"{k}-{v}" for k, v in conventions.items()) + ".toml")
    path.write_text(text)
    return str(path)


def graded(grade_of, tmp_path, code: str, rubric_path: str):
    sub = tmp_path / "attention.py"
    sub.write_text(code)
    return grade_of(sub, rubric_path)


@pytest.mark.parametrize("param, combine, conventions", [
    ("attention_mask", REAL, {}),
    ("key_padding_mask", TORCH, {"padding": "pad"}),
    ("additive_mask", ADDITIVE, {"padding": "additive", "padding_name": "additive_mask"}),
])
def test_the_padding_mask_reaches_forward_as_the_rubric_declares(grade_of, tmp_path, param, combine, conventions):
    assert_full_marks(graded(grade_of, tmp_path, layer(param, combine), rubric(tmp_path, **conventions)))


def test_a_mask_read_in_another_convention_loses_the_padding_checks(grade_of, tmp_path):
    grade = graded(grade_of, tmp_path, layer("key_padding_mask", TORCH), rubric(tmp_path))  # 1 = real token sent
    assert failed(grade) and failed(grade) <= PADDING_CHECKS


def test_a_mask_of_no_known_name_is_told_how_a_rubric_names_it(grade_of, tmp_path):
    grade = graded(grade_of, tmp_path, layer("m", REAL), rubric(tmp_path))
    assert failed(grade) == PADDING_CHECKS
    words = " ".join(o.message for o in grade.outcomes if o.status == "failed")
    assert "takes no padding mask by a name the grader knows" in words and 'padding_name = "<parameter>"' in words
    (tmp_path / "named").mkdir()
    assert_full_marks(graded(grade_of, tmp_path / "named", layer("m", REAL), rubric(tmp_path, padding_name="m")))


def test_the_replay_snippet_passes_the_padding_mask_by_forwards_name(tmp_path):
    """`replay` of a padding check prints the mask as the grader sent it and calls forward with it by its own name
    (padding_mask here); run beside the file, the snippet gives the weights the failure names."""
    import os
    import subprocess
    import sys

    folder = ROOT / "submissions" / "masked_mha_module"
    run = subprocess.run([sys.executable, "-m", "grader.frontends.cli", "replay", str(folder / "bug_padding_on_queries.py"),
                          "--check", "padding_keys_zero", "--rubric", "masked_mha_module"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stderr
    snippet = run.stdout.split("run it):\n", 1)[1].split("\n\n", 1)[0]
    assert "padding_mask = torch.tensor(" in snippet and snippet.endswith("result = layer(x, padding_mask=padding_mask)")
    where, value = re.search(r"attention_weights\[([\d, ]+)\] = ([\d.]+)", run.stdout).groups()
    script = tmp_path / "replay.py"
    script.write_text(snippet + f"\nprint(float(result.attention_weights[{where}]))\n")
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(folder)})
    assert ran.returncode == 0, ran.stderr
    assert float(ran.stdout) == pytest.approx(float(value), rel=1e-3)
