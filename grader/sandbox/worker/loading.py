"""Loading a submission: its code run as a module of its own name, and its entry point found. This is where
student code first runs, inside the walls."""

from __future__ import annotations

import sys
import types

from grader.sandbox.worker.errors import BadOutput


def load(req: dict, code: bytes) -> types.FunctionType:
    folder = req.get("folder")
    if folder:
        sys.path.insert(0, folder)
    module = types.ModuleType(req["module"])
    module.__file__ = req["filename"]
    sys.modules[req["module"]] = module  # dataclasses and pickle look modules up by name
    exec(compile(code.decode(), req["filename"], "exec"), module.__dict__)
    fn = getattr(module, req["entry"], None)
    if not callable(fn):
        raise BadOutput(f"{req['entry']} is not a function after running the file")
    return fn
