"""Run one check again: its counterexample, the exact input tensors, and your weights beside the reference's.

Grading is deterministic (hypothesis runs derandomized), so the same file meets exactly the same case again; once
the check passes, the command says so and exits 0.
"""

from __future__ import annotations

import sys

from grader.frontends import options


def add_arguments(p) -> None:
    p.add_argument("path", help="your .py file, notebook or folder")
    options.add_submission_options(p.add_argument)
    p.add_argument("--check", required=True, metavar="ID", help="the check to run again (as `check` names it)")


def literal(t) -> str:
    """Python source that rebuilds tensor `t` exactly (shortest round-trip digits for its dtype)."""
    import numpy as np

    a = t.detach().numpy()

    def nested(x) -> str:
        if isinstance(x, np.ndarray):
            return "[" + ", ".join(nested(y) for y in x) + "]"
        return str(x) if np.isfinite(x) else f"float('{x}')"

    dtype = "" if str(t.dtype) == "torch.float32" else f", dtype={t.dtype}"  # torch.tensor's default for floats
    return f"torch.tensor({nested(a)}{dtype})"


def inputs(case, entry: str) -> list[str]:
    """Lines that rebuild the case's inputs, and the call, in plain PyTorch."""
    def value(x) -> str:
        if isinstance(x, (tuple, list)):  # a KV cache
            return "(" + ", ".join(value(y) for y in x) + ("," if len(x) == 1 else "") + ")"
        return literal(x) if hasattr(x, "numpy") else repr(x)

    args, options = list(case.args), dict(case.kw)
    for name in case.names[len(args):]:  # an option named as a positional input goes in its place, as in the worker
        if name not in options:
            break
        args.append(options.pop(name))
    names = [case.names[i] if i < len(case.names) else f"arg{i}" for i in range(len(args))]
    kw = "".join(f", {n}={value(x)}" for n, x in options.items())
    return [f"{n} = {value(x)}" for n, x in zip(names, args)] + [f"result = {entry}({', '.join(names)}{kw})"]


def matrix(w) -> str:
    """A [T, T] slice of weights as aligned rows, nan and inf included."""
    return "\n".join(" ".join(f"{x:8.4f}" for x in row) for row in w.tolist())


def not_replayable(rubric, cid: str) -> str:
    """Why `cid` names no check replay can run, in one line ("" when it does): a visible check of the rubric, or for a
    rubric in parts a visible check of one of its parts, as PART.CHECK (the ids `check` prints)."""
    where, inner, of = rubric, cid, f"rubric {rubric.name}"
    if rubric.parts:
        name, dot, inner = cid.partition(".")
        if not dot or name not in rubric.parts:
            meant = [f"{p}.{cid}" for p, r in rubric.parts.items() if cid in r.checks]
            said = f"did you mean {' or '.join(meant)}?" if meant else f"e.g. {next(iter(rubric.parts))}.loads"
            no = f"rubric {rubric.name} has no part {name!r}" if dot else f"rubric {rubric.name} grades in parts"
            return (f"{cid!r} is not a check of rubric {rubric.name}: {no} (its parts: {', '.join(rubric.parts)}), "
                    f"and a part's check is named PART.CHECK ({said})")
        where, of = rubric.parts[name], f"part {name} of rubric {rubric.name}"
    spec = where.checks.get(inner)
    if spec is None or spec.visibility != "visible":
        prefix = cid[: len(cid) - len(inner)]
        known = ", ".join(prefix + c for c, s in where.checks.items() if s.visibility == "visible")
        return f"{cid!r} is not a visible check of {of} ({known})"
    return ""


def run(args) -> int:
    from grader.frontends import check

    rubric = check.prepare(args)
    if rubric is None:
        return 2
    from grader.grading.engine import Grading
    from grader.reports import heatmap

    unknown = not_replayable(rubric, args.check)
    if unknown:
        print(f"attention-grader: {unknown}", file=sys.stderr)
        return 2
    grading = Grading(args.path, rubric, reading=options.reading(vars(args).get))
    part, _ = grading.grading_of(args.check)  # a rubric in parts: the part's own grading, subject and exercise
    try:
        o = grading.outcome(args.check)
    finally:
        grading.close()
    if o.status == "passed":
        print(f"PASS {o.id}: {o.title}")
        return 0
    print(f"{o.status.upper()} {o.id}: {o.title}\n{o.message}")
    case = o.case
    if case is not None:
        print("\nThe inputs (paste them into Python to try your function yourself):")
        assert part.subject is not None  # loaded: the check ran
        lines = inputs(case, part.subject.entry)
        if part.exercise.build is not None:  # a class: the grader built it and set the weights
            lines[-1] = (f"# the grader built {part.subject.entry} from its constructor, set these weights into its "
                         f"projections and called it in eval() on x:\n# {lines[-1]}")
        print("\n".join(["import torch", *lines]))
        if case.weights is not None and case.expected is not None:
            where = heatmap.worst(case)
            name = f"weights[{', '.join(map(str, where + (':', ':')))}]"
            print(f"\nyour {name}:\n{matrix(case.weights[where])}\nthe reference's {name}:\n{matrix(case.expected[where])}")
    return 1
