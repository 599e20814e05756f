"""The worker's own failures, raised where it checks what student code gave it and told apart by type (never by
their words) when the server says what went wrong."""

from __future__ import annotations


class BadOutput(Exception):
    """The function returned something that is not (out, weights) of the agreed shapes; `shapes`: the shape it has
    and the one agreed, when that is what is wrong; `unreached`: the inputs no gradient reached, by name."""

    def __init__(self, message: str, shapes: tuple[list[int], list[int]] | None = None, unreached: list[str] | None = None):
        super().__init__(message)
        self.shapes = shapes
        self.unreached = unreached or []


class DeviceError(RuntimeError):
    """An op mixed a tensor on the inputs' device with a non-scalar tensor on another one: CUDA raises there."""
