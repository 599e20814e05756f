"""Run one check again: its counterexample, the exact input tensors, and your weights beside the reference's.

Grading is deterministic (hypothesis runs derandomized), so the same file meets exactly the same case again; once
the check passes, the command says so and exits 0.
"""

from __future__ import annotations

import ast
import keyword
import sys
from pathlib import Path

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


def value(x) -> str:
    """Python source for one input: a tensor, a KV cache's tuple of them, a plain value."""
    if isinstance(x, (tuple, list)):  # a KV cache
        return "(" + ", ".join(value(y) for y in x) + ("," if len(x) == 1 else "") + ")"
    return literal(x) if hasattr(x, "numpy") else repr(x)


def inputs(case, entry: str) -> list[str]:
    """Lines that rebuild the case's inputs, and the call, in plain PyTorch."""
    args, options = list(case.args), dict(case.kw)
    for name in case.names[len(args):]:  # an option named as a positional input goes in its place, as in the worker
        if name not in options:
            break
        args.append(options.pop(name))
    names = [case.names[i] if i < len(case.names) else f"arg{i}" for i in range(len(args))]
    kw = "".join(f", {n}={value(x)}" for n, x in options.items())
    return [f"{n} = {value(x)}" for n, x in zip(names, args)] + [f"result = {entry}({', '.join(names)}{kw})"]


def importable(source, path: Path) -> str | None:
    """The module a file beside the submission imports its code from (`attention`, `pkg.model` in a folder); None
    for a notebook, or a file no import statement names."""
    if source is None or not source.filename.endswith(".py"):
        return None
    file = Path(source.filename)
    try:
        parts = file.relative_to(path).with_suffix("").parts if source.folder else (file.stem,)
    except ValueError:
        return None
    return ".".join(parts) if parts and all(p.isidentifier() and not keyword.iskeyword(p) for p in parts) else None


def _plain(said: str) -> str | None:
    """A constructor argument or config value as the worker reported it, if it is a plain literal (int, float, bool)."""
    try:
        found = ast.literal_eval(said)
    except (ValueError, SyntaxError):
        return None
    return repr(found) if type(found) in (int, float, bool) else None


def _target(name: str) -> str:
    """The parameter `name` of `layer` in Python: layer.c_attn.weight, or get_parameter where a part is no name."""
    parts = name.split(".")
    if all(p.isidentifier() and not keyword.iskeyword(p) for p in parts):
        return "layer." + name
    return f"layer.get_parameter({name!r})"


def built(found: dict, case, module: str | None) -> list[str] | None:
    """Lines that build a layer class as the grader did (`found`: Subject.describe at the case's sizes): the module
    globals it set, the config with the attributes the class read, the constructor call, the case's weights set into
    the parameters that took them, then the call on x in eval() mode; None where what the worker said is not plain
    enough to write as Python."""
    cls, args, kw = found["class"], list(case.args), dict(case.kw)
    mask = kw.pop("padding_mask", None)  # the batch's padding mask, passed to forward by its name (masked_mha_module)
    if set(kw) - {"heads", "context", "dropout", "train"} or (mask is not None and not found.get("padding", "").isidentifier()):
        return None  # an input forward takes besides x: not written here
    tensors = dict(zip(case.names, args))
    d = int(args[0].shape[-1])
    if not cls.isidentifier() or not all(n.isidentifier() for n in found["config"]):
        return None
    lines = [f"from {module} import {cls}  # your file, in this folder" if module else
             f"# {cls}: your class, defined above (run its cell or file first)"]
    globals_ = {k.removeprefix("global "): v for k, v in found["built"].items() if k.startswith("global ")}
    if globals_:
        lines += ["# your file's globals that your class reads instead of arguments, as the grader set them:",
                  *([f"import {module}"] if module else [])]
    for name, said in globals_.items():
        literal_ = _plain(said)
        if literal_ is None or not name.isidentifier():
            return None
        lines.append(f"{module + '.' if module else ''}{name} = {literal_}")
    if found["config"]:
        values = {n: _plain(v) for n, v in found["config"].items()}
        if None in values.values():
            return None
        if found["by_key"]:  # read as config["n_embd"] or config.get("n_embd") too
            lines += ["class Config(types.SimpleNamespace):",
                      "    def __getitem__(self, name): return getattr(self, name)",
                      "    def get(self, name, default=None): return getattr(self, name, default)",
                      "    def __contains__(self, name): return hasattr(self, name)"]
        made = "Config" if found["by_key"] else "types.SimpleNamespace"
        lines.append(f"config = {made}({', '.join(f'{n}={v}' for n, v in values.items())})  # what your class reads of it")
    given = []
    for name, said in found["built"].items():
        if name.startswith("global "):
            continue
        literal_ = "config" if said == "config" else _plain(said)
        if literal_ is None or not name.isidentifier():
            return None
        given.append(literal_ if name in found["positional"] else f"{name}={literal_}")
    mode = "train()" if kw.get("train") else "eval()"
    dtype = "" if str(args[0].dtype) == "torch.float32" else ".to(x.dtype)"  # a module's parameters: float32
    lines.append(f"layer = {cls}({', '.join(given)}){dtype}.{mode}")
    if found["problem"]:
        lines.append("# the grader could not tell which parameters take which weights, so your layer kept its own")
    else:
        sets = []
        for name, pieces in found["pieces"].items():
            if not all(r in tensors and 0 <= a < b <= d for r, a, b in pieces):
                return None
            if any(tensors[r] is None for r, _, _ in pieces):
                continue  # a role the case leaves out: the layer keeps its own parameter
            rows = [r if (a, b) == (0, d) else f"{r}[{a}:{b}]" for r, a, b in pieces]
            sets.append(f"    {_target(name)}.copy_({rows[0] if len(rows) == 1 else 'torch.cat([' + ', '.join(rows) + '])'})")
        if sets:
            lines += ["with torch.no_grad():  # the grader's weights in your layer's parameters", *sets]
    tensors_ = [f"{n} = {value(t)}" for n, t in tensors.items() if t is not None]
    if mask is not None:
        tensors_.append(f"padding_mask = {value(mask)}")
    head = ["import torch", *(["import types"] if found["config"] else [])]
    call = "result = layer(x)" if mask is None else f"result = layer(x, {found['padding']}=padding_mask)"
    return [*head, lines[0], *tensors_, "# how the grader built your class, set its weights and called it:", *lines[1:],
            call]


def described(part, case) -> dict | None:
    """For a layer handed in as a class: how the worker built it at the case's sizes (Subject.describe), else None."""
    from grader.sandbox.client import StudentError, WorkerLost

    if case is None or part.exercise.build is None or part.subject is None or not case.args:
        return None
    kw = case.kw
    try:  # the worker's defaults where the case gives none (sandbox.worker.modules.Layer.__call__)
        return part.subject.describe(int(kw.get("context", 8)), d=int(case.args[0].shape[-1]),
                                     heads=int(kw.get("heads", 1)), dropout=float(kw.get("dropout", 0.1)))
    except (StudentError, WorkerLost):
        return None


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
        found = described(part, o.case)  # while its worker is there to ask
    finally:
        grading.close()
    if o.status == "passed":
        print(f"PASS {o.id}: {o.title}")
        return 0
    print(f"{o.status.upper()} {o.id}: {o.title}\n{o.message}")
    case = o.case
    if case is not None:
        assert part.subject is not None  # loaded: the check ran
        lines = built(found, case, importable(part.source, part.path)) if found is not None else None
        if lines is not None:  # a class: built, given the weights and called as the grader did
            print("\nThe inputs and your class as the grader built it (paste them into a file beside yours and run it):")
        else:
            print("\nThe inputs (paste them into Python to try your function yourself):")
            lines = ["import torch", *inputs(case, part.subject.entry)]
            if part.exercise.build is not None:  # a class the worker could not describe: the call in words
                lines[-1] = (f"# the grader built {part.subject.entry} from its constructor, set these weights into its "
                             f"projections and called it in eval() on x:\n# {lines[-1]}")
        print("\n".join(lines))
        if case.weights is not None and case.expected is not None:
            where = heatmap.worst(case)
            name = f"weights[{', '.join(map(str, where + (':', ':')))}]"
            print(f"\nyour {name}:\n{matrix(case.weights[where])}\nthe reference's {name}:\n{matrix(case.expected[where])}")
    return 1
