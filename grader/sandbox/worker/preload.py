"""What the fork server preloads: the worker's code, torch already imported and warm.

When the grader exits, the fork server would spend most of a second in the interpreter's teardown freeing
torch, holding the grader's stdout and stderr open all that time (a pipe reading them waits for it). Nothing in
it needs tearing down, so it ends at once. Its forked workers always leave through os._exit, never through this.
"""

import atexit
import os

from grader.sandbox import spawn  # noqa: F401
from grader.sandbox.worker import serve  # noqa: F401 - the preload itself; a worker unpickles spawn's classes

atexit.register(os._exit, 0)
