"""Trampoline for forked workers: importing this module costs nothing, so the grader can name the target
without importing grader.worker (which sets torch threads and becomes a subreaper) into its own process."""


def run(sock, out_path: str, limits: dict) -> None:
    from grader import worker  # already imported by the fork server's preload

    worker.main(sock, out_path, limits)
