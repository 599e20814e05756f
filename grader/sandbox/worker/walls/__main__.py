"""`python -m grader.sandbox.worker.walls ARGS`: the walls probe in a throwaway process (`confinement` runs it), so
that the walls it raises for real stay out of the grader; its answer is one JSON line on stdout.

The walls go up in a child of this process, which stays outside them to remove the probe's working folder: the
grader that started the probe may be killed before it ends, and the probe may have left root or the folder's
reach behind (a uid of its own, Landlock) by then."""

import json
import shutil
import sys
import tempfile

from grader.sandbox.worker.walls.probe import in_child, probe

workdir = tempfile.mkdtemp(prefix="attention-grader-probe-")
try:
    said = in_child(lambda: probe(**json.loads(sys.argv[1]), workdir=workdir))
finally:
    shutil.rmtree(workdir, ignore_errors=True)
print(said.decode())
