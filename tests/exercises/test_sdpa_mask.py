"""sdpa_mask beyond the matrix: CS336's SDPA returns its output alone, so (out, weights) costs output_shape by default;
a rubric whose course returns the pair (the Annotated Transformer's `attention`, under the `int` mask convention)
declares `weights_returned = "optional"`, and the pair then costs nothing."""

import re
from pathlib import Path

import pytest

from conftest import failed

ROOT = Path(__file__).resolve().parents[2]

ANNOTATED = '''import math

import torch


def attention(query, key, value, mask=None, dropout=None):
    "Compute 'Scaled Dot Product Attention'"
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    if dropout is not None:
        p_attn = dropout(p_attn)
    return torch.matmul(p_attn, value), p_attn
'''  # harvardnlp/annotated-transformer, the_annotated_transformer.py: attention, as it is


@pytest.mark.parametrize("returned, lost", [("optional", set()), ("never", {"output_shape"})])
def test_the_annotated_transformers_pair_costs_what_the_rubric_says(grade_of, tmp_path, returned, lost):
    text = (ROOT / "rubrics" / "sdpa_mask.toml").read_text()
    text = re.sub(r"^entry_points = \[[^\]]*\]", 'entry_points = ["attention"]', text, flags=re.M)
    for name, value in {"mask": "int", "fully_masked": "finite", "weights_returned": returned}.items():
        text, n = re.subn(rf'^{name} = "[^"]*"', f'{name} = "{value}"', text, flags=re.M)
        assert n == 1
    rubric = tmp_path / f"annotated-{returned}.toml"
    rubric.write_text(text)
    sub = tmp_path / "annotated.py"
    sub.write_text(ANNOTATED)
    grade = grade_of(sub, str(rubric))
    assert failed(grade) == lost, [o.message for o in grade.outcomes if o.status == "failed"]
    if lost:
        assert "returns more than the output" in next(o.message for o in grade.outcomes if o.id == "output_shape")
