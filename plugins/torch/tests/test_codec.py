"""Matrices and vectors on the wire (lazyvi_torch.codec) through the
generated protobuf classes: the bytes lazyvi's Go side writes (raw
little-endian float64s, row by row) and reads."""

import struct

import pytest
import torch

from lazyvi_torch import codec
from lazyvi_torch.errors import UsageError
from lazyvi_torch.pb import backend_pb2 as pb


def wire(m):
    """m through its serialised bytes, as it crosses the transport."""
    return type(m).FromString(m.SerializeToString())


def test_matrix_round_trip():
    t = torch.randn(5, 3, dtype=torch.float64)
    t[0, 0], t[1, 1], t[2, 2] = float("nan"), float("-inf"), -0.0
    m = wire(codec.matrix_pb(t))
    assert (m.rows, m.cols, m.upper) == (5, 3, False)
    # The Go side's encoding: each value's IEEE 754 bits, little-endian.
    assert m.data == struct.pack("<15d", *t.reshape(-1).tolist())
    got = codec.tensor(m, "x")
    assert got.dtype == torch.float64 and got.shape == (5, 3)
    assert torch.equal(got.isnan(), t.isnan()) and torch.equal(got.nan_to_num(), t.nan_to_num())
    assert torch.signbit(got[2, 2])


def test_upper_triangle():
    a = torch.randn(4, 4, dtype=torch.float64)
    s = a + a.T
    m = wire(codec.matrix_pb(s, upper=True))
    assert m.upper and len(m.data) == 8 * 10
    assert torch.equal(codec.tensor(m, "k"), s)


def test_vector_and_float32():
    v = torch.arange(6, dtype=torch.float32) / 3
    got = codec.vector(wire(codec.vector_pb(v)), "v")
    assert got.dtype == torch.float64 and torch.equal(got, v.to(torch.float64))
    assert codec.vector(None, "v").numel() == 0


def test_tensor_owns_writable_memory():
    m = codec.matrix_pb(torch.ones(2, 2, dtype=torch.float64))
    t = codec.tensor(m, "x")
    t += 1  # writable: a copy of the message's bytes, not a view of them
    assert torch.equal(codec.tensor(m, "x"), torch.ones(2, 2, dtype=torch.float64))


@pytest.mark.parametrize("m, msg", [
    (pb.Matrix(rows=2, cols=3, data=b"\0" * 8), "1 values, want 6"),
    (pb.Matrix(rows=1, cols=1, data=b"\0" * 7), "not whole float64s"),
    (pb.Matrix(rows=3, cols=2, data=b"\0" * 48, upper=True), "upper triangle"),
    (pb.Matrix(rows=-1, cols=2), "malformed"),
    (None, "missing"),
])
def test_malformed(m, msg):
    with pytest.raises(UsageError, match=msg):
        codec.tensor(m, "x")
