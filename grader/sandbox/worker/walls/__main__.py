"""`python -m grader.sandbox.worker.walls ARGS`: the walls probe in a throwaway process (`confinement` runs it), so
that the walls it raises for real stay out of the grader; its answer is one JSON line on stdout.

Its working folder is its own, made here and removed here through a descriptor of the folder that holds it (the
private view covers that folder by then): the grader that started the probe may be killed before it ends."""

import json
import os
import sys
import tempfile

from grader.sandbox.worker.walls.probe import probe

base = tempfile.gettempdir()
holder = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
workdir = tempfile.mkdtemp(prefix="attention-grader-probe-", dir=base)
try:
    print(json.dumps(probe(**json.loads(sys.argv[1]), workdir=workdir)))
finally:
    try:
        os.rmdir(os.path.basename(workdir), dir_fd=holder)
    except OSError:  # Landlock, where the probe itself raised it (no PID namespace): one empty folder left
        pass
