"""The worker's meta-device warm-up (the simulated GPU of the device check) does not import torch._dynamo, and a
submission that compiles with dynamo still gets dynamo's own handling once dynamo is imported."""

import subprocess
import sys

import pytest

WORKER = """
import gc, sys, torch
from grader.sandbox.worker import warm
if sys.argv[1] == "frozen":
    gc.freeze()  # as `check` does before it forks its fork server: torch's objects are out of gc.get_objects' sight
warm.warm_meta()
assert gc.get_freeze_count() > 0 if sys.argv[1] == "frozen" else True
assert "torch._dynamo" not in sys.modules, "the meta warm-up imported dynamo"
x = torch.ones(4, 4, device="meta")
assert torch.triu(x).device.type == "meta" and torch.tril(x, -1).shape == (4, 4)
f = torch.compile(lambda a: torch.tril(a, -1) * 2, backend="eager")
assert torch.equal(f(torch.ones(3, 3)), torch.tril(torch.ones(3, 3), -1) * 2)
assert torch.triu(x).device.type == "meta"
print("ok")
"""


@pytest.mark.parametrize("objects", ["collected", "frozen"])
def test_the_meta_warm_up_leaves_dynamo_to_a_submission_that_compiles(objects):
    # its own process: importing the warm-up sets torch's threads and pays its first-use costs
    done = subprocess.run([sys.executable, "-c", WORKER, objects], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
