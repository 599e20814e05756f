"""The batch command's local back end: a pool of warm grader processes forked from the batch command, each with
a fork server of its own whose forked workers run the student code. A Dask worker's grader process
(frontends.warm_grader) starts and grades the same way (warm_up, grade_one)."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path


class LocalPool:
    """The batch command's local back end, with the Dask back end's interface (frontends.cluster.Backend)."""

    def __init__(self, workers: int):
        self.workers = workers

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass

    def describe(self) -> str:
        return f"{self.workers} grader processes"

    def grade_all(self, todo: list[tuple[str, object, str]], rubric, loading: dict, draws, key: str, out: Path,
                  save, progress) -> dict[str, str]:
        return _grade_all(todo, rubric, loading, draws, out, self.workers, save, progress)


def _grade_all(todo: list[tuple[str, object, str]], rubric, loading: dict, draws, out: Path, workers: int,
               save, progress) -> dict[str, str]:
    """Grade in `workers` grader processes; `save(name, hash, grade dict)` each grade as it arrives.

    Grader processes are forked from this one, which has imported torch and the rubric and has no thread yet (the
    pool starts its own after forking them): they begin warm and share its memory. Each asks the fork server this
    process forked before it read the rubric (run) for a fork server of its own, whose forked workers run the
    student code, a fresh one per submission. Each writes the
    submission's feedback pages (their pictures need the failing tensors) and sends back the grade as JSON text.
    Returns name -> why for submissions that could not be graded.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    _pyplot()
    before = set(multiprocessing.active_children())
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                               initializer=_start_grader, initargs=(rubric.model_dump_json(), rubric.origin, os.getpid()))
    errors = {}
    try:
        futures = {pool.submit(grade_one, staged, str(out / name), loading, draws): (name, h) for name, staged, h in todo}
        for future in as_completed(futures):
            name, h = futures[future]
            try:
                save(name, h, json.loads(future.result()))
            except Exception as e:  # noqa: BLE001 - a grader process that died or raised loses only its own
                errors[name] = f"{type(e).__name__}: {e}".splitlines()[0]
            progress.step()
    except BaseException:
        for proc in set(multiprocessing.active_children()) - before:
            proc.kill()  # their workers see the socket close and exit; the fork servers follow
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return errors


def _pyplot() -> None:
    """matplotlib's pyplot, imported once here before the fork instead of in each grader (its first failing case's
    heatmap) and again for the summary's histogram once grading is done, where nothing else runs beside it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot


_rubric = None


def _start_grader(rubric_json: str, origin: str, parent: int) -> None:
    """In each grader process: die with the batch process (even on kill -9), leave Ctrl-C to it, warm up."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from grader.frontends import ending
    from grader.sandbox import spawn

    ending.die_with(parent)

    spawn.own_server()
    warm_up()
    global _rubric
    _rubric = rubric_from_json(rubric_json, origin)


def warm_up() -> None:
    """What a grader process does once, before it reads a rubric: torch, the fork server, the engine's imports.
    (A Dask worker's grader process, frontends.warm_grader, starts the same way: from a process that holds nothing
    else, the fork server is a fork of it, taken once torch is imported, as `check`'s is.)"""
    import torch

    torch.set_num_threads(1)  # before any op: N graders share N cores, and idle OpenMP threads spin
    from grader.sandbox import spawn

    spawn.warm_up(meta=True)  # a fork server for many workers: they inherit the meta kernels
    import gc

    import grader.grading.engine  # noqa: F401 - its imports (hypothesis, the reference) overlap the fork server's start

    gc.freeze()  # hypothesis' first run collects garbage: torch's million objects, frozen, are not walked


def rubric_from_json(rubric_json: str, origin: str):
    from grader.grading.rubric import Rubric

    rubric = Rubric.model_validate_json(rubric_json)
    rubric._origin = origin  # as rubric.load sets it: the replay commands in the feedback name it
    return rubric


def grade_one(staged, folder: str, loading: dict, draws, rubric=None) -> str:
    """One staged submission (submission.staging.Staged) under the batch's draws (checks.draws), in a warm grader
    process: its feedback pages in `folder`, its grade as JSON text. The one grading function of the batch command:
    the local pool and a Dask worker's grader process both call it."""
    from grader.grading.engine import Grading
    from grader.reports import feedback_page
    from grader.submission.reading import Reading

    rubric = rubric or _rubric
    assert rubric is not None, "the rubric is an argument, or warm_up's in a grader process"
    grade = Grading(staged.shown, rubric, reading=Reading(**loading), staged=staged, draws=draws).finish()
    feedback_page.write(grade, folder)
    return json.dumps(grade.as_dict())
