"""The worker's meta-device warm-up (the simulated GPU of the device check) does not import torch._dynamo, and a
submission that compiles with dynamo still gets dynamo's own handling once dynamo is imported."""

import subprocess
import sys

WORKER = """
import sys, torch
from grader.sandbox.worker import serve
serve.warm_meta()
assert "torch._dynamo" not in sys.modules, "the meta warm-up imported dynamo"
x = torch.ones(4, 4, device="meta")
assert torch.triu(x).device.type == "meta" and torch.tril(x, -1).shape == (4, 4)
f = torch.compile(lambda a: torch.tril(a, -1) * 2, backend="eager")
assert torch.equal(f(torch.ones(3, 3)), torch.tril(torch.ones(3, 3), -1) * 2)
assert torch.triu(x).device.type == "meta"
print("ok")
"""


def test_the_meta_warm_up_leaves_dynamo_to_a_submission_that_compiles():
    # its own process: importing the worker's module sets torch's threads and makes the process a subreaper
    done = subprocess.run([sys.executable, "-c", WORKER], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
