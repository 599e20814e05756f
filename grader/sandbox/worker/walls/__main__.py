"""`python -m grader.sandbox.worker.walls ARGS`: the walls probe in a throwaway process (`confinement` runs it), so
that the walls it raises for real stay out of the grader; its answer is one JSON line on stdout.

The walls go up in a child of this process, which stays outside them to remove the probe's working folder: the
grader that started the probe may be killed before it ends, and the probe may have left root or the folder's
reach behind (a uid of its own, Landlock) by then."""

import json
import os
import shutil
import sys
import tempfile
import traceback

from grader.sandbox.worker.walls.probe import probe

workdir = tempfile.mkdtemp(prefix="attention-grader-probe-")
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    try:
        os.close(r)
        os.write(w, json.dumps(probe(**json.loads(sys.argv[1]), workdir=workdir)).encode())
    except BaseException:  # noqa: BLE001 - whatever stopped it, on stderr for the grader's retry to say
        traceback.print_exc()
    finally:
        os._exit(0)
os.close(w)
said = b""
while chunk := os.read(r, 65536):
    said += chunk
os.waitpid(pid, 0)
shutil.rmtree(workdir, ignore_errors=True)
print(said.decode())
