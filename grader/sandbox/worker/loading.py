"""Loading a submission: its code run as a module of its own name, and its entry point found. This is where
student code first runs, inside the walls."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable

from grader.sandbox.worker.errors import BadOutput
from grader.sandbox.worker.modules import Layer, find  # imported before the import blocker seals


def load(req: dict, code: bytes) -> Callable:
    folder = req.get("folder")
    if folder:
        sys.path.insert(0, folder)
    module = types.ModuleType(req["module"])
    module.__file__ = req["filename"]
    sys.modules[req["module"]] = module  # dataclasses and pickle look modules up by name
    exec(compile(code.decode(), req["filename"], "exec"), module.__dict__)
    if req.get("build") is not None:  # a layer handed in as a class: built and called by sandbox.worker.modules
        return Layer(find(module, req["entry"]), module, req["build"])
    fn = getattr(module, req["entry"], None)
    if not callable(fn):
        raise BadOutput(f"{req['entry']} is not a function after running the file")
    return fn
