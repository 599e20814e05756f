"""Framing and tensor codec for the grader <-> worker socket.

A frame is a JSON header plus one raw byte payload. Tensors travel as raw little-endian bytes whose dtype and
shape are named in the header; the receiver checks both against what it asked for before building a tensor.
Nothing is ever unpickled: a worker runs student code, so whatever it sends is data to validate, not code.
A call's arguments travel as a JSON skeleton whose tensors are indices into the payload (`encode` / `decode`).
"""

from __future__ import annotations

import json
import math
import socket
import struct
import time
from enum import StrEnum

import torch

HEADER = struct.Struct("!IQ")  # json length, payload length
MAX_JSON = 1 << 20
MAX_PAYLOAD = 256 << 20
POLL = 0.05  # seconds between looks at a deadline that is a function (the time left, in the worker's own time)
EXIT_MEMORY = 86  # a worker that runs out of memory where it cannot say so in a frame exits with this status

DTYPES = {
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
    "float64": torch.float64,
    "bool": torch.bool,
    "int64": torch.int64,
    "int32": torch.int32,
}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}


class Kind(StrEnum):
    """Why a worker's request failed, as its reply names it: the grader words each kind, nothing parses the text."""

    EXCEPTION = "exception"  # the student's function (or file) raised
    BAD_OUTPUT = "bad_output"  # it returned something that is not the agreed result
    DEVICE = "device"  # it mixed the inputs' device with another one (the device check's meta tensors)
    MEMORY = "memory"  # MemoryError: the worker's address-space limit
    OUTPUT = "output"  # the output file's size limit
    EXIT = "exit"  # SystemExit
    MISSING = "missing_module"  # it imports a package the grading machine lacks: the error is the package's name
    SANDBOX = "sandbox"  # a wall did not go up: no student code ran
    PROTOCOL = "protocol"  # the worker's meta twin broke the protocol


class WireError(Exception):
    """The peer broke the protocol: bad header, oversized or malformed data."""


class Deadline(Exception):
    """The deadline passed before a whole frame arrived."""


def send(sock: socket.socket, header: dict, payload: bytes = b"") -> None:
    data = json.dumps(header).encode()
    sock.sendall(b"".join((HEADER.pack(len(data), len(payload)), data, payload)))  # one write: one wake-up of the peer


def _recv_exact(sock: socket.socket, n: int, deadline: float | None) -> bytearray:
    buf = bytearray()
    while len(buf) < n:
        if deadline is not None:
            left = deadline() if callable(deadline) else deadline - time.monotonic()
            if left <= 0:
                raise Deadline()
            sock.settimeout(min(left, POLL) if callable(deadline) else left)
        else:
            sock.settimeout(None)
        try:
            chunk = sock.recv(min(n - len(buf), 1 << 20))
        except TimeoutError:
            if callable(deadline):
                continue  # asked again: time spent waiting for a CPU does not count
            raise Deadline() from None
        if not chunk:
            raise EOFError("peer closed the connection")
        buf += chunk
    return buf


def recv(sock: socket.socket, deadline=None, max_payload: int = MAX_PAYLOAD) -> tuple[dict, bytes]:
    jlen, plen = HEADER.unpack(_recv_exact(sock, HEADER.size, deadline))
    if jlen > MAX_JSON or plen > max_payload:
        raise WireError(f"frame too large ({jlen} + {plen} bytes)")
    body = _recv_exact(sock, jlen + plen, deadline)  # one read for both: a frame is sent in one write
    try:
        header = json.loads(body[:jlen])
    except ValueError as e:
        raise WireError(f"malformed header: {e}") from None
    if not isinstance(header, dict):
        raise WireError("header is not an object")
    return header, bytes(memoryview(body)[jlen:])  # the payload copied once, as when it was read on its own


def pack(tensors: list[torch.Tensor]) -> tuple[list[dict], bytes]:
    """Specs and concatenated raw bytes of CPU tensors."""
    specs, chunks = [], []
    for t in tensors:
        with torch._C.DisableTorchFunctionSubclass():
            t = torch.Tensor.contiguous(torch.Tensor.cpu(torch.Tensor.detach(t)))
            raw = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        specs.append({"dtype": DTYPE_NAMES[t.dtype], "shape": list(t.shape), "nbytes": len(raw)})
        chunks.append(raw)
    return specs, b"".join(chunks)


def unpack(specs: object, payload: bytes, allowed: set[str] | None = None) -> list[torch.Tensor]:
    """Tensors from specs and raw bytes, after checking every spec against the payload."""
    if not isinstance(specs, list):
        raise WireError("tensor specs are not a list")
    out, offset = [], 0
    for spec in specs:
        if not isinstance(spec, dict):
            raise WireError("tensor spec is not an object")
        name, shape, nbytes = spec.get("dtype"), spec.get("shape"), spec.get("nbytes")
        if name not in DTYPES or (allowed is not None and name not in allowed):
            raise WireError(f"dtype {name!r} not allowed")
        if not isinstance(shape, list) or not all(type(d) is int and 0 <= d for d in shape) or len(shape) > 8:
            raise WireError(f"bad shape {shape!r}")
        dtype = DTYPES[name]
        expected = math.prod(shape) * dtype.itemsize
        if type(nbytes) is not int or nbytes != expected or offset + nbytes > len(payload):
            raise WireError(f"byte count {nbytes!r} does not match shape {shape} of {name}")
        raw = payload[offset : offset + nbytes]
        offset += nbytes
        t = torch.frombuffer(bytearray(raw), dtype=dtype) if nbytes else torch.empty(0, dtype=dtype)
        out.append(t.reshape(shape))
    if offset != len(payload):
        raise WireError("payload has trailing bytes")
    return out


def encode(value, tensors: list[torch.Tensor]):
    """A call argument as JSON: {"t": i} for a tensor (appended to `tensors`), {"seq": [...]} for a tuple or list
    (a KV cache), {"v": x} for a plain value (a flag, a window size, None)."""
    if isinstance(value, torch.Tensor):
        tensors.append(value)
        return {"t": len(tensors) - 1}
    if isinstance(value, (tuple, list)):
        return {"seq": [encode(x, tensors) for x in value]}
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"v": value}
    raise TypeError(f"cannot send a {type(value).__name__} to a worker")


def decode(spec, tensors: list[torch.Tensor]):
    """The value `encode` described, with its tensors taken from `tensors`."""
    if not isinstance(spec, dict):
        raise WireError("argument spec is not an object")
    if "t" in spec:
        i = spec["t"]
        if type(i) is not int or not 0 <= i < len(tensors):
            raise WireError(f"bad tensor index {i!r}")
        return tensors[i]
    if "seq" in spec and isinstance(spec["seq"], list):
        return tuple(decode(x, tensors) for x in spec["seq"])
    if "v" in spec:
        return spec["v"]
    raise WireError("malformed argument spec")
