"""What a failure of student code becomes in a reply: its kind (which the grader words), a one-line description
and the submission's own frames. Student exceptions are hostile objects: nothing here may raise because of one."""

from __future__ import annotations

import errno
import traceback

from grader.sandbox import wire
from grader.sandbox.worker.errors import DeviceError


def student_frames(exc: BaseException, filename: str) -> list:
    """[line, function] of the submission's own frames, innermost last; the grader adds the source text."""
    try:
        return [[f.lineno, f.name] for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename][-3:]
    except BaseException:  # noqa: BLE001 - a traceback through hostile objects
        return []


def kind(exc: BaseException) -> wire.Kind:
    """How the grader words the failure: exit, memory, output, a device mixed, or a plain exception."""
    try:
        if isinstance(exc, SystemExit):
            return wire.Kind.EXIT
        if isinstance(exc, MemoryError) or (isinstance(exc, RuntimeError) and "can't allocate memory" in _text(exc)):
            return wire.Kind.MEMORY
        if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
            return wire.Kind.OUTPUT
        if type(exc) is DeviceError:  # the trace's own, never a student's subclass
            return wire.Kind.DEVICE
        if type(exc) is ModuleNotFoundError and _package(exc):  # Python's own, as an import raises it
            return wire.Kind.MISSING
    except BaseException:  # noqa: BLE001 - a student's exception subclass whose attributes raise
        pass
    return wire.Kind.EXCEPTION


def _text(exc: BaseException) -> str:
    """str(exc), even when the exception's own __str__ raises or is not a str (student objects can do both)."""
    try:
        text = exc.code if isinstance(exc, SystemExit) else str(exc)
        return text if isinstance(text, str) else repr(text)
    except BaseException:  # noqa: BLE001 - the student's __str__ may raise anything
        return ""


def _package(exc: ModuleNotFoundError) -> str:
    """The top-level package a failed import named, when it is a plain dotted name."""
    name = exc.name if isinstance(exc.name, str) else ""
    top = name.split(".")[0]
    return top if top.isidentifier() and len(top) <= 100 else ""


def describe(exc: BaseException) -> str:
    if kind(exc) is wire.Kind.MISSING:
        return _package(exc)  # type: ignore[arg-type]
    if isinstance(exc, SystemExit):
        return f"sys.exit({_text(exc)[:100]})"
    text = _text(exc).strip().splitlines()
    first = text[0][:300] if text else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__
