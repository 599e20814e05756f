"""Tensors cross the process boundary as validated bytes; anything malformed is refused, never unpickled."""

import pytest
import torch

from grader.sandbox import wire


def test_roundtrip_keeps_dtype_shape_and_values():
    ts = [torch.randn(2, 3, 4), torch.randn(5, dtype=torch.float64), torch.zeros(0, 3), torch.ones(2, 2, dtype=torch.bfloat16)]
    specs, data = wire.pack(ts)
    back = wire.unpack(specs, data)
    for a, b in zip(ts, back):
        assert a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)


@pytest.mark.parametrize(
    "specs",
    [
        [{"dtype": "object", "shape": [1], "nbytes": 8}],
        [{"dtype": "float32", "shape": [-1], "nbytes": 4}],
        [{"dtype": "float32", "shape": [3], "nbytes": 8}],
        [{"dtype": "float32", "shape": [10**12], "nbytes": 4 * 10**12}],
        "not a list",
        [["float32", [1]]],
    ],
)
def test_malformed_specs_are_refused(specs):
    with pytest.raises(wire.WireError):
        wire.unpack(specs, b"\0" * 12)


def test_dtype_outside_the_agreed_set_is_refused():
    specs, data = wire.pack([torch.ones(2, dtype=torch.int64)])
    with pytest.raises(wire.WireError, match="not allowed"):
        wire.unpack(specs, data, {"float32"})


def test_oversized_frame_is_refused():
    import socket

    a, b = socket.socketpair()
    a.sendall(wire.HEADER.pack(10, wire.MAX_PAYLOAD + 1))
    with pytest.raises(wire.WireError, match="too large"):
        wire.recv(b, deadline=None)
