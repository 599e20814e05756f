"""Grade every submission in one or more folders: in parallel, resumable, with a gradebook and a class summary.

Each direct child of a folder is one submission (a .py file, a notebook or a folder). Finished grades go to an
SQLite gradebook in --out as they come, keyed by the content hashes of the submission, the rubric and the grader,
so a re-run (after Ctrl-C, kill -9, or with new submissions) grades only what is missing or changed. The grading
runs in a local pool of grader processes, or with --scheduler on a Dask cluster (frontends.cluster).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from grader.frontends import class_insight, options

SKIP = ("README", "readme")  # notes beside the submissions, not submissions


class BadInput(Exception):
    """One line for the teacher; exit status 2."""


def _workers(text: str) -> int:
    import argparse

    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of processes >= 1, not {text!r}")
    return int(text)


def add_arguments(p) -> None:
    p.add_argument("dirs", nargs="+", metavar="DIR", help="folders whose direct children are submissions")
    options.add_rubric(p.add_argument)
    p.add_argument("--out", default="grades", help="output folder, also the resumable gradebook (default: grades)")
    p.add_argument("--workers", type=_workers, default=os.cpu_count() or 1,
                   help="grader processes working at once (default: the number of CPUs)")
    options.add_reading(p.add_argument)
    p.add_argument("--force", action="store_true", help="grade every submission again, even unchanged ones")
    p.add_argument("--scheduler", type=_scheduler, metavar="tcp://HOST:PORT|local:N",
                   help="grade on a Dask cluster (needs attention-grader[dask]): a running scheduler's address, or "
                        "local:N for a local cluster of N worker threads (a grader process each); --workers then does not apply")
    class_insight.add_arguments(p)  # --starter, --compare-with


def _scheduler(text: str) -> str:
    import argparse

    from grader.frontends import cluster  # no Dask import: only the address's form is checked here

    try:
        return cluster.check_address(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def submissions(dirs: list[str], out: Path) -> dict[str, Path]:
    """name -> path for every submission, sorted by name; the output folder is never a submission."""
    found: dict[str, Path] = {}
    for d in dirs:
        folder = Path(d)
        if not folder.is_dir():
            raise BadInput(f"{d}: not a folder")
        for child in sorted(folder.iterdir()):
            if child.name.startswith((".", "_")) or child.name.startswith(SKIP) or child.resolve() == out.resolve():
                continue
            if not (child.is_dir() or child.suffix in (".py", ".ipynb")):
                continue
            if child.name in found:
                raise BadInput(f"two submissions named {child.name!r}: {found[child.name]} and {child}")
            found[child.name] = child
    if not found:
        raise BadInput(f"no submissions (.py files, notebooks or folders) in {', '.join(dirs)}")
    return dict(sorted(found.items()))


def run(args) -> int:
    import sqlite3

    from grader.frontends.startup import CannotStart, start

    out = Path(args.out)
    scheduler = vars(args).get("scheduler")
    try:
        subs = submissions(args.dirs, out)
        if out.exists() and not out.is_dir():
            raise BadInput(f"--out {out}: exists and is not a folder")
        # with a local pool or local:N, its graders' fork servers are forks of the one started here, before the rubric
        # is read; a cluster of machines grades elsewhere
        rubric = start(args.rubric, meta=True, server=not scheduler or scheduler.startswith("local:"))
        from grader.frontends import store as gradebook
        from grader.grading.engine import default_draws

        draws = default_draws()
        store = gradebook.Store(out)
    except (CannotStart, BadInput) as e:
        print(f"attention-grader: {e}", file=sys.stderr)
        return 2
    except sqlite3.DatabaseError as e:
        print(f"attention-grader: {out / gradebook.DB_NAME}: not a usable gradebook ({e}); move it away to start afresh",
              file=sys.stderr)
        return 2
    except OSError as e:
        print(f"attention-grader: {e.filename or out}: {e.strerror}", file=sys.stderr)
        return 2
    reading = options.reading(vars(args).get)
    key = gradebook.grader_hash(rubric, reading.as_dict(), draws)
    with tempfile.TemporaryDirectory(prefix="attention-grader-staged-") as scratch:
        staged = stage_all(subs, Path(scratch), rubric)
        hashes = {name: gradebook.submission_hash(s) for name, s in staged.items()}
        todo = [n for n in subs if args.force or not store.current(n, hashes[n], key) or not (out / n / "feedback.md").exists()]
        try:
            backend = _backend(scheduler, min(args.workers, len(todo)), len(todo)) if todo else None
        except CannotStart as e:  # before any output: an unreachable scheduler is one line
            store.close()
            print(f"attention-grader: {e}", file=sys.stderr)
            return 2
        print(f"{len(subs)} submissions: {len(todo)} to grade, {len(subs) - len(todo)} unchanged since the last run",
              file=sys.stderr)
        errors: dict[str, str] = {}
        if backend is not None:
            jobs = [(n, staged[n], hashes[n]) for n in todo]
            save = lambda name, h, grade: store.put(name, h, key, grade)  # noqa: E731
            try:
                with backend:
                    errors = backend.grade_all(jobs, rubric, reading.as_dict(), draws, key, out, save,
                                               Progress(len(jobs), backend.describe()))
            except KeyboardInterrupt:
                left = sum(not store.current(n, hashes[n], key) for n in subs)
                print(f"\nattention-grader: interrupted; {len(subs) - left} of {len(subs)} graded and saved in {out}."
                      " Run the same command again to grade the rest.", file=sys.stderr)
                return 130
    _finish(out, store.grades(list(subs)), rubric.order(), subs, args)
    store.close()
    for name, why in sorted(errors.items()):
        print(f"attention-grader: {name}: not graded: {why}", file=sys.stderr)
    if errors:
        print(f"attention-grader: {len(errors)} submissions not graded; run the same command again to retry them",
              file=sys.stderr)
        return 1
    return 0


def _backend(scheduler: str | None, workers: int, tasks: int):
    """Where the submissions are graded: a Dask cluster (frontends.cluster) or the local pool (frontends.pool),
    both with one interface. CannotStart when the cluster does not answer."""
    if not scheduler:
        from grader.frontends.pool import LocalPool

        return LocalPool(workers)
    from grader.frontends import cluster
    from grader.frontends.startup import CannotStart

    try:
        return cluster.connect(scheduler, tasks)
    except cluster.Unavailable as e:
        raise CannotStart(str(e)) from None


def stage_all(subs: dict[str, Path], into: Path, rubric) -> dict:
    """Every submission's private copy (submission.staging), made here once: the hash and the grading read it."""
    from grader.submission import staging

    caps = staging.Caps.of(rubric.limits)
    found = {}
    for name, path in subs.items():
        try:
            found[name] = staging.stage(path, into, caps)
        except staging.LoadError as e:  # gone since it was listed
            found[name] = staging.Staged(path, None, str(e))
    return found


def _finish(out: Path, grades, check_ids: list[str], subs: dict[str, Path], args) -> None:
    """Every file from the database (and the class insight from the submissions' text), then the gradebook table
    and the class summary on the terminal."""
    from tabulate import tabulate

    from grader.reports import gradebook, summary
    from grader.reports.text import points

    gradebook.export(out, grades, check_ids)
    found = class_insight.examine(grades, subs, args)
    insight = class_insight.write(out, grades, check_ids, found)
    text = summary.write(out, grades, found)
    rows = [[g.submission, f"{points(g.score)}/{points(g.max_score)}",
             ", ".join(o.id for o in g.outcomes if o.status == "failed")] for g in grades]
    print(tabulate(rows, headers=["submission", "score", "failed checks"]))
    print()
    print(text.replace(f"![score histogram]({summary.PNG})", f"Histogram: {out / summary.PNG}"), end="")
    print(f"\n{insight}")
    print(f"\nWritten to {out}: gradebook.csv, summary.md, class.html, similarity.csv, provenance.csv, twins.csv, and per "
          "submission results.json, junit.xml, feedback.md/.html")


class Progress:
    """count, rate and ETA: one redrawn line on a terminal, a plain line every 10% or 30 s otherwise."""

    def __init__(self, total: int, workers: int | str, stream=None):
        self.total, self.done = total, 0
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.start = self.last = time.monotonic()
        self.failures: dict[str, int] = {}  # where -> how many submissions failed there (a Dask worker, say)
        on = f"{workers} grader processes" if isinstance(workers, int) else workers
        self.stream.write(f"grading {total} submissions with {on}\n")
        self.stream.flush()

    def step(self, failed_on: str | None = None) -> None:
        self.done += 1
        if failed_on is not None:
            self.failures[failed_on] = self.failures.get(failed_on, 0) + 1
        now = time.monotonic()
        rate = self.done / max(now - self.start, 1e-9)
        eta = int((self.total - self.done) / rate)
        line = f"graded {self.done}/{self.total}  {rate:.2f}/s  ETA {eta // 60}:{eta % 60:02d}"
        if self.failures:
            line += "  failed: " + ", ".join(f"{n} on {where}" for where, n in sorted(self.failures.items()))
        if self.tty:
            bar = "#" * (20 * self.done // self.total)
            self.stream.write(f"\r[{bar:<20}] {line}   " + ("\n" if self.done == self.total else ""))
        elif self.done == self.total or now - self.last >= 30 or self.done % max(1, self.total // 10) == 0:
            self.stream.write(line + "\n")
            self.last = now
        self.stream.flush()
