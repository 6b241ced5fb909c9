"""Matrices and vectors of the backend protocol as tensors.

Matrix.data and Vector.data hold raw IEEE 754 little-endian float64s, row
by row (see proto/lazyvi/backend/v2/backend.proto): numpy reads them with
frombuffer and a tensor's bytes are its numpy array's tobytes, so no Python
loop ever runs over the values.
"""

import numpy as np
import torch

from .errors import UsageError
from .pb import backend_pb2 as pb

_F8 = np.dtype("<f8")


def _floats(data: bytes, want: int, what: str) -> torch.Tensor:
    if len(data) % 8:
        raise UsageError("%s: %d bytes of values are not whole float64s" % (what, len(data)))
    if len(data) // 8 != want:
        raise UsageError("%s: %d values, want %d" % (what, len(data) // 8, want))
    # A writable copy: the tensor must own memory it may be handed on with.
    return torch.from_numpy(np.frombuffer(bytearray(data), dtype=_F8))


def tensor(m: "pb.Matrix", name: str) -> torch.Tensor:
    """The matrix m (with data, not a handle's reference) as an n x p
    float64 tensor; UsageError (INVALID_ARGUMENT) when missing or
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
        iu = torch.triu_indices(n, n)
        out = torch.zeros(n, n, dtype=torch.float64)
        out[iu[0], iu[1]] = data
        out[iu[1], iu[0]] = data
        return out
    return _floats(m.data, m.rows * m.cols, name).reshape(m.rows, m.cols)


def vector(v: "pb.Vector", name: str) -> torch.Tensor:
    """The vector v as a float64 tensor (empty when absent)."""
    data = v.data if v is not None else b""
    if len(data) % 8:
        raise UsageError("%s: %d bytes of values are not whole float64s" % (name, len(data)))
    return _floats(data, len(data) // 8, name)


def _bytes(t: torch.Tensor) -> bytes:
    return t.detach().to("cpu", torch.float64).contiguous().numpy().astype(_F8, copy=False).tobytes()


def matrix_pb(t: torch.Tensor, upper: bool = False) -> "pb.Matrix":
    """The n x p tensor t as a Matrix; with upper, the symmetric t as its
    upper triangle."""
    t = t.detach()
    if t.dim() == 1:
        t = t.unsqueeze(1)
    n, p = t.shape
    if upper and n == p and n > 0:
        iu = torch.triu_indices(n, n, device=t.device)
        return pb.Matrix(rows=n, cols=n, data=_bytes(t[iu[0], iu[1]]), upper=True)
    return pb.Matrix(rows=n, cols=p, data=_bytes(t))


def vector_pb(t: torch.Tensor) -> "pb.Vector":
    """The tensor t, flattened, as a Vector."""
    return pb.Vector(data=_bytes(t.reshape(-1)))
