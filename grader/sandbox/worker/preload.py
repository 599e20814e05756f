"""What the fork server preloads (the worker's code, torch already imported and warm), and what the fork server
itself must be: the subreaper of its workers' orphans, and quick to exit.

When the grader exits, the fork server would spend most of a second in the interpreter's teardown freeing
torch, holding the grader's stdout and stderr open all that time (a pipe reading them waits for it). Nothing in
it needs tearing down, so it ends at once. Its forked workers always leave through os._exit, never through this.
"""

import atexit
import os
import warnings

from grader.sandbox import spawn  # noqa: F401
from grader.sandbox.worker import serve  # noqa: F401 - the preload itself; a worker unpickles spawn's classes
from grader.sandbox.worker.walls import linux

linux.become_subreaper()  # orphans of every worker come back here to be reaped
warnings.filterwarnings("ignore", message="forkserver: waitpid returned unexpected pid")  # those orphans, reaped
atexit.register(os._exit, 0)
