"""`attention-grader`: one entry point, one module per subcommand (check, replay, grade, bundle, rubric)."""

from __future__ import annotations

import argparse
import os
import sys

from grader.frontends import bundle, check, ending, grade, replay, rubric

COMMANDS = {"check": check, "replay": replay, "grade": grade, "bundle": bundle, "rubric": rubric}


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own exit code 2, with our one-line style
        self.exit(2, f"attention-grader: error: {message}\n")


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="attention-grader", description="Grade implementations of causal self-attention.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, module in COMMANDS.items():
        module.add_arguments(sub.add_parser(name, help=(module.__doc__ or "").splitlines()[0], description=module.__doc__))
    return p


def main(argv: list[str] | None = None) -> int:
    from grader.sandbox.confinement import WallsDown  # no torch: the walls' module imports only the stdlib

    args = parser().parse_args(argv)
    try:
        return COMMANDS[args.command].run(args)
    except WallsDown as e:  # never grade with a wall down that this machine supports, unless the teacher chose it
        print(f"attention-grader: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("attention-grader: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `attention-grader check x.py | head`: the reader left early, nothing to report
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so that the exit's flush stays quiet
        return 1


def entry() -> None:
    """The console script: every command ends without the interpreter's teardown (`ending`). What they write is
    whole by then: files are written whole and renamed (reports.files), the gradebook commits each grade."""
    code = main()
    ending.exit_now(code)
    sys.exit(code)


if __name__ == "__main__":
    entry()
