"""A Dask worker's warm grader process: `python -P -m grader.frontends.warm_grader` (-P: the worker's folder is not on
its path), one request and one reply per line of JSON on its standard input and output.

It is the local pool's grader process (pool.warm_up, pool.grade_one) started with subprocess rather than
multiprocessing: a Dask worker process is daemonic, and a daemonic process may not start multiprocessing children
(dask/distributed#2142, #2718), while a grader process starts a fork server whose forked workers run the student
code. It imports torch once and grades submission after submission. It warms up before it reads a request or starts
a thread, so that its fork server is a fork of it (sandbox.spawn): torch imported once, not again in a fresh
interpreter beside it, and no rubric or course secret in what its workers inherit.

A request: {"path", "copy", "refused", "folder", "hash", "loading", "rubric", "origin", "key", "salt"}; `path` is the
submission's path as the batch command was given it (what the reports name), `copy` its staged copy as the Dask
worker unpacked it, `refused` why the batch command could not stage it. The rubric and the grader's version
are checked against `key`, the batch command's grader hash, before grading: a mismatch is an error, never a
silent regrade under another rubric. A reply: {"grade": the grade as JSON text} or {"error": one line}.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time


class Mismatch(Exception):
    """This worker would not grade as the batch command expects."""


def _watch_parent(parent: int) -> None:
    """Die with the Dask worker, even mid-submission and even on kill -9 (PR_SET_PDEATHSIG would follow the thread
    that started this process, and a Dask worker's threads come and go)."""
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(1)


def main() -> int:
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # anything else printed here goes to the worker's log, not into the replies
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the batch command's, not a worker's
    parent = os.getppid()
    from grader.frontends import pool

    pool.warm_up()
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    rubrics: dict = {}
    for line in sys.stdin:
        req = json.loads(line)
        try:
            reply = {"grade": _handle(req, rubrics)}
        except Mismatch as e:
            reply = {"error": str(e)}
        except Exception as e:  # noqa: BLE001 - this submission's error; the process stays for the next one
            reply = {"error": f"{type(e).__name__}: {e}".splitlines()[0]}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()
    return 0


def _handle(req: dict, rubrics: dict) -> str:
    from pathlib import Path

    from grader.checks.draws import Draws
    from grader.frontends import pool, store
    from grader.submission.staging import Staged

    draws = Draws(bytes.fromhex(req["salt"]))
    which = (req["rubric"], req["origin"])
    if which not in rubrics:
        rubrics[which] = pool.rubric_from_json(*which)
    rubric = rubrics[which]
    here = store.grader_hash(rubric, req["loading"], draws)
    if here != req["key"]:
        raise Mismatch(f"this Dask worker grades differently from the batch command (attention-grader "
                       f"{store.release()} here, {req['release']} there, or the rubric reads differently here): "
                       "install the same version everywhere")
    staged = Staged(Path(req["path"]), Path(req["copy"]) if req["copy"] else None, req["refused"])
    return pool.grade_one(staged, req["folder"], req["loading"], draws, rubric)


if __name__ == "__main__":
    sys.exit(main())
