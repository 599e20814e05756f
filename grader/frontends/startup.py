"""What every front end does before it grades, in the order that keeps it fast and safe: the fork server first (so
that its import of torch runs beside this process's, and it holds nothing secret), then the rubric, the draws (a
course secret named but unreadable stops here) and the walls (one this machine should raise and does not stops
here). A front end words a `CannotStart` its own way: one line and exit 2, pytest.exit, a notebook's error, a
platform's results file."""

from __future__ import annotations


class CannotStart(Exception):
    """One line for the teacher or student: a bad rubric, an unusable course secret, a wall down."""


def start(rubric: str, *, meta: bool = False, server: bool = True):
    """The rubric, validated, with the fork server started and the draws and the walls checked. meta: a fork
    server for many workers (sandbox.spawn); server=False: none here (a batch that grades on a Dask cluster)."""
    from grader.sandbox import spawn

    if server:
        spawn.warm_up(meta=meta)
    import gc

    from grader.checks.draws import SecretError
    from grader.grading.engine import default_draws
    from grader.grading.rubric import RubricError, load
    from grader.sandbox.confinement import WallsDown, walls

    gc.freeze()  # hypothesis' first run collects garbage: torch's million objects, frozen, are not walked
    try:
        loaded = load(rubric)
        default_draws()
        walls()
    except (RubricError, SecretError, WallsDown) as e:
        raise CannotStart(str(e)) from None
    return loaded
