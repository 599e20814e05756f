"""Trampoline for forked workers: importing this module costs nothing, so the grader can name the target
without importing grader.worker (which sets torch threads and becomes a subreaper) into its own process, and
can start the fork server before it imports torch itself."""

import multiprocessing
import multiprocessing.forkserver


def context():
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["grader.worker"])
    return ctx


def warm_up() -> None:
    """Start the fork server now, so that its `import torch` overlaps the grader's own (call it before that)."""
    context()
    multiprocessing.forkserver.ensure_running()


def run(sock, out_path: str, limits: dict) -> None:
    from grader import worker  # already imported by the fork server's preload

    worker.main(sock, out_path, limits)
