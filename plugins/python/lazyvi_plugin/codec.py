"""Matrices and vectors of the backend protocol as numpy arrays.

Matrix.data and Vector.data hold raw IEEE 754 little-endian float64s, row
by row (see proto/lazyvi/backend/v2/backend.proto): numpy reads them with
frombuffer and writes them with tobytes, so no Python loop ever runs over
the values. Every array this module returns is float64, C-contiguous and
owns writable memory.
"""

import numpy as np

from .errors import UsageError
from .pb import backend_pb2 as pb

F8 = np.dtype("<f8")


def _floats(data: bytes, want: int, what: str) -> np.ndarray:
    if len(data) % 8:
        raise UsageError("%s: %d bytes of values are not whole float64s" % (what, len(data)))
    if len(data) // 8 != want:
        raise UsageError("%s: %d values, want %d" % (what, len(data) // 8, want))
    # A writable copy: the array must own memory it may be handed on with.
    return np.frombuffer(bytearray(data), dtype=F8)


def array(m: "pb.Matrix", name: str) -> np.ndarray:
    """The matrix m (with data, not a handle's reference) as an n x p
    float64 array; UsageError (INVALID_ARGUMENT) when missing or
    malformed."""
    if m is None:
        raise UsageError("%s: missing matrix" % name)
    if m.rows < 0 or m.cols < 0:
        raise UsageError("%s: malformed matrix: %d x %d" % (name, m.rows, m.cols))
    if m.upper:
        n = m.rows
        if n != m.cols:
            raise UsageError("%s: malformed matrix: a %d x %d upper triangle" % (name, m.rows, m.cols))
        data = _floats(m.data, n * (n + 1) // 2, name)
        iu = np.triu_indices(n)
        out = np.zeros((n, n), dtype=F8)
        out[iu] = data
        out[iu[1], iu[0]] = data
        return out
    return _floats(m.data, m.rows * m.cols, name).reshape(m.rows, m.cols)


def vector(v: "pb.Vector", name: str) -> np.ndarray:
    """The vector v as a float64 array (empty when absent)."""
    data = v.data if v is not None else b""
    if len(data) % 8:
        raise UsageError("%s: %d bytes of values are not whole float64s" % (name, len(data)))
    return _floats(data, len(data) // 8, name)


def numpy(a) -> np.ndarray:
    """a (a numpy array, or anything np.asarray reads: a CPU tensor, a
    list) as a float64 array."""
    return np.asarray(a, dtype=F8)


def matrix_pb(a, upper: bool = False) -> "pb.Matrix":
    """The n x p array a (a vector: n x 1) as a Matrix; with upper, the
    symmetric a as its upper triangle."""
    a = numpy(a)
    if a.ndim == 1:
        a = a.reshape(-1, 1)
    if a.ndim != 2:
        raise ValueError("matrix_pb: a %d-dimensional array, want 2" % a.ndim)
    n, p = a.shape
    if upper and n == p and n > 0:
        return pb.Matrix(rows=n, cols=n, data=np.ascontiguousarray(a[np.triu_indices(n)], dtype=F8).tobytes(), upper=True)
    return pb.Matrix(rows=n, cols=p, data=np.ascontiguousarray(a, dtype=F8).tobytes())


def vector_pb(a) -> "pb.Vector":
    """The array a, flattened, as a Vector."""
    return pb.Vector(data=np.ascontiguousarray(numpy(a).reshape(-1), dtype=F8).tobytes())
