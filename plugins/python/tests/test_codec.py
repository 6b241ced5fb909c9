"""Matrices and vectors on the wire (lazyvi_plugin.codec) through the
generated protobuf classes: the bytes lazyvi's Go side writes (raw
little-endian float64s, row by row) and reads."""

import struct

import numpy as np
import pytest

from lazyvi_plugin import codec
from lazyvi_plugin.errors import UsageError
from lazyvi_plugin.pb import backend_pb2 as pb


def wire(m):
    """m through its serialised bytes, as it crosses the transport."""
    return type(m).FromString(m.SerializeToString())


def test_matrix_round_trip():
    a = np.random.default_rng(1).standard_normal((5, 3))
    a[0, 0], a[1, 1], a[2, 2] = np.nan, -np.inf, -0.0
    m = wire(codec.matrix_pb(a))
    assert (m.rows, m.cols, m.upper) == (5, 3, False)
    # The Go side's encoding: each value's IEEE 754 bits, little-endian.
    assert m.data == struct.pack("<15d", *a.reshape(-1).tolist())
    got = codec.array(m, "x")
    assert got.dtype == np.float64 and got.shape == (5, 3)
    assert np.array_equal(got, a, equal_nan=True)
    assert np.signbit(got[2, 2])


def test_upper_triangle():
    a = np.random.default_rng(2).standard_normal((4, 4))
    s = a + a.T
    m = wire(codec.matrix_pb(s, upper=True))
    assert m.upper and len(m.data) == 8 * 10
    assert np.array_equal(codec.array(m, "k"), s)


def test_vector_and_float32():
    v = np.arange(6, dtype=np.float32) / 3
    got = codec.vector(wire(codec.vector_pb(v)), "v")
    assert got.dtype == np.float64 and np.array_equal(got, v.astype(np.float64))
    assert codec.vector(None, "v").size == 0


def test_column_vector_answer():
    m = codec.matrix_pb(np.array([1.0, 2.0, 3.0]))
    assert (m.rows, m.cols) == (3, 1)


def test_array_owns_writable_memory():
    m = codec.matrix_pb(np.ones((2, 2)))
    a = codec.array(m, "x")
    a += 1  # writable: a copy of the message's bytes, not a view of them
    assert np.array_equal(codec.array(m, "x"), np.ones((2, 2)))


def test_answers_of_other_array_types():
    # A framework's own arrays, here a list and a Fortran-ordered array,
    # travel row by row all the same.
    f = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    assert codec.array(codec.matrix_pb(f), "x").tolist() == [[0, 1, 2], [3, 4, 5]]
    assert codec.vector(codec.vector_pb([1, 2]), "v").tolist() == [1.0, 2.0]


@pytest.mark.parametrize("m, msg", [
    (pb.Matrix(rows=2, cols=3, data=b"\0" * 8), "1 values, want 6"),
    (pb.Matrix(rows=1, cols=1, data=b"\0" * 7), "not whole float64s"),
    (pb.Matrix(rows=3, cols=2, data=b"\0" * 48, upper=True), "upper triangle"),
    (pb.Matrix(rows=-1, cols=2), "malformed"),
    (None, "missing"),
])
def test_malformed(m, msg):
    with pytest.raises(UsageError, match=msg):
        codec.array(m, "x")
