"""mha_layer_rope beyond the matrix: the replay's inputs are in CS336's signature (the checks call in mha_layer's
order, Exercise.bound puts max_seq_len and theta in their places), so the snippet runs the student's function."""

import runpy
import subprocess
import sys

import torch

from conftest import SUBMISSIONS


def test_the_replay_snippet_calls_the_adapter_as_cs336_does(tmp_path):
    sample = SUBMISSIONS / "mha_layer_rope" / "bug_rope_q_only.py"
    run = subprocess.run([sys.executable, "-m", "grader.frontends.cli", "replay", str(sample), "--check",
                          "relative_positions", "--rubric", "mha_layer_rope"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stderr
    snippet = run.stdout.split("try your function yourself):\n", 1)[1]
    assert "max_seq_len = 64\ntheta = 10000.0\n" in snippet
    assert "run_multihead_self_attention_with_rope(d_model, num_heads, max_seq_len, theta, q_proj_weight" in snippet
    script = tmp_path / "replay.py"
    script.write_text(sample.read_text() + "\n" + snippet)
    ran = runpy.run_path(str(script))
    assert ran["result"].shape == ran["in_features"].shape and ran["token_positions"].dtype == torch.int64
