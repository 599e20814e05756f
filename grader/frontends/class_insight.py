"""The batch command's class insight: its options (--starter, --compare-with), checked before anything is graded,
and the files it writes beside the gradebook (similarity.csv, provenance.csv, twins.csv, class.html), from the
stored grades and the submissions' text, on every run and on an unchanged re-run alike."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(p) -> None:
    p.add_argument("--starter", nargs="+", action="extend", type=_starter, default=[], metavar="FILE",
                   help="the template the course handed out (give it after the folders): its lines never count as "
                        "anyone's own in the similarity and provenance reports")
    p.add_argument("--compare-with", action="append", type=_folder, default=[], metavar="DIR",
                   help="a folder of known solutions (last year's class, say) to trace submissions to, beside the "
                        "public implementations the grader knows; may be given more than once")


def _starter(text: str) -> Path:
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"{text}: no such file" if not path.exists() else f"{text}: not a file")
    try:
        path.read_bytes().decode("utf-8")  # a template's lines that cannot be read would never count: say so
    except OSError as e:
        raise argparse.ArgumentTypeError(f"{text}: cannot be read ({e.strerror})") from None
    except UnicodeDecodeError:
        raise argparse.ArgumentTypeError(f"{text}: not UTF-8 text, as a .py file or a notebook is") from None
    return path


def _folder(text: str) -> Path:
    from grader.insight.corpus import children

    path = Path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: no such folder" if not path.exists() else f"{text}: not a folder")
    try:
        found = children(path)
    except OSError as e:
        raise argparse.ArgumentTypeError(f"{text}: cannot be read ({e.strerror})") from None
    if not found:
        raise argparse.ArgumentTypeError(f"{text}: holds no .py files, notebooks or folders to compare with")
    return path


def examine(grades, subs: dict[str, Path], args):
    """The class insight of these grades and submissions, with the command's options."""
    from grader.frontends import options
    from grader.insight import findings

    get = vars(args).get
    return findings.examine(subs, grades, get("starter") or [], get("compare_with") or [], options.reading(get))


def write(out: Path, grades, check_ids: list[str], found) -> str:
    """The insight's files; returns the line the terminal gets about them."""
    from grader.reports import class_files, class_page

    class_files.write(out, found)
    class_page.write(out, grades, check_ids, found)
    return (f"Similar pairs: {len(found.pairs)} ({class_files.SIMILARITY}), traced to a source: {len(found.traces)} "
            f"({class_files.PROVENANCE}), behaviour twins: {len(found.twins)} groups ({class_files.TWINS}); "
            f"all on one page: {out / class_page.PAGE}")
