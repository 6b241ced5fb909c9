"""The matrix-carrying messages of lazyvi.backend.v1, decoded and encoded by hand.

The generated classes (lazyvi_torch.pb.backend_pb2) hand a packed repeated
double over as a container of Python floats: turning a 2000 x 2000 kernel into
a tensor that way costs a second (measured: 0.2-0.6 s each way for 4e6
values). Here the packed field's bytes become a tensor by one copy
(numpy.frombuffer) and a tensor's bytes become the field (tobytes), so no
Python loop ever runs over the elements. The small control messages
(capabilities, options, NewModel) use the generated classes.

The encoding is protobuf's (https://protobuf.dev/programming-guides/encoding/):
every field is a varint tag (number << 3 | wire type) followed by a varint
(type 0), 8 bytes (type 1), a varint length and that many bytes (type 2) or 4
bytes (type 5). Proto3 packs repeated doubles as one type-2 field of 8-byte
little-endian values; a decoder must also accept them unpacked (one type-1
field each) and packed in several pieces, and so does this one.
"""

import numpy as np
import torch

# Wire types.
_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5


class WireError(ValueError):
    """A malformed message."""


def _varint(buf, pos):
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise WireError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise WireError("varint too long")


def fields(buf):
    """Returns {field number: [values]} of the message in buf (bytes or a
    memoryview): ints for varints, memoryviews for the rest."""
    mv = memoryview(buf)
    out = {}
    pos, end = 0, len(mv)
    while pos < end:
        tag, pos = _varint(mv, pos)
        num, wt = tag >> 3, tag & 7
        if wt == _VARINT:
            v, pos = _varint(mv, pos)
        elif wt == _I64:
            v, pos = mv[pos:pos + 8], pos + 8
        elif wt == _LEN:
            n, pos = _varint(mv, pos)
            v, pos = mv[pos:pos + n], pos + n
        elif wt == _I32:
            v, pos = mv[pos:pos + 4], pos + 4
        else:
            raise WireError("unsupported wire type %d" % wt)
        if pos > end:
            raise WireError("truncated field %d" % num)
        out.setdefault(num, []).append(v)
    return out


def _int(f, num, signed=False):
    """The last value of varint field num (0 when absent)."""
    vs = f.get(num)
    if not vs:
        return 0
    v = vs[-1]
    if not isinstance(v, int):
        raise WireError("field %d is not a varint" % num)
    if signed and v >= 1 << 63:
        v -= 1 << 64
    return v


def _doubles(f, num):
    """The repeated double field num as a float64 numpy array (a copy)."""
    parts = f.get(num)
    if not parts:
        return np.empty(0, dtype=np.float64)
    raw = parts[0] if len(parts) == 1 else b"".join(bytes(p) for p in parts)
    if len(raw) % 8:
        raise WireError("field %d: %d bytes of doubles" % (num, len(raw)))
    return np.frombuffer(raw, dtype="<f8").astype(np.float64)


def _message(f, num):
    """The sub-message field num (its fields), or None when absent."""
    vs = f.get(num)
    if not vs:
        return None
    if isinstance(vs[-1], int):
        raise WireError("field %d is not a message" % num)
    if len(vs) == 1:
        return fields(vs[0])
    # Repeated occurrences of a message field merge.
    return fields(b"".join(bytes(v) for v in vs))


class Matrix:
    """A decoded Matrix message: rows, cols, data (float64 numpy, maybe
    empty), key (bytes), upper."""

    __slots__ = ("rows", "cols", "data", "key", "upper")

    def __init__(self, f):
        self.rows = _int(f, 1, signed=True)
        self.cols = _int(f, 2, signed=True)
        self.data = _doubles(f, 3)
        self.key = bytes(f[4][-1]) if f.get(4) else b""
        self.upper = bool(_int(f, 5))


def _matrix(f, num):
    m = _message(f, num)
    return None if m is None else Matrix(m)


def _vector(f, num):
    """A Vector field as a float64 tensor (empty when absent)."""
    m = _message(f, num)
    data = np.empty(0) if m is None else _doubles(m, 1)
    return torch.from_numpy(data)


class Request:
    """A decoded request: model_id and the message's other fields by name."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def _shift(f):
    return Request(x=_matrix(f, 1), dtheta=_vector(f, 2), x_train=_matrix(f, 3), a=_vector(f, 4))


# Decoders of the requests that carry matrices, by RPC name.
def decode_fit(buf):
    f = fields(buf)
    return Request(model_id=_int(f, 1), x=_matrix(f, 2), y=_vector(f, 3))


def decode_matrix_request(buf):
    f = fields(buf)
    return Request(model_id=_int(f, 1), x=_matrix(f, 2))


def decode_predict_shifted(buf):
    f = fields(buf)
    return Request(model_id=_int(f, 1), x=_matrix(f, 2), dtheta=_vector(f, 3))


def decode_kernel(buf):
    f = fields(buf)
    return Request(model_id=_int(f, 1), x1=_matrix(f, 2), x2=_matrix(f, 3), allow_upper=bool(_int(f, 4)))


def decode_jtvec(buf):
    f = fields(buf)
    return Request(model_id=_int(f, 1), x=_matrix(f, 2), a=_vector(f, 3))


def decode_jacobian_product(buf):
    """A JacobianProductRequest (JacobianMul and JacobianTMul)."""
    f = fields(buf)
    return Request(model_id=_int(f, 1), x=_matrix(f, 2), v=_matrix(f, 3))


def decode_predict_shifts(buf):
    f = fields(buf)
    return Request(model_id=_int(f, 1), shifts=[_shift(fields(s)) for s in f.get(2, [])])


def decode_gram(buf):
    f = fields(buf)
    return Request(model_id=_int(f, 1), x=_matrix(f, 2), e=_vector(f, 3))


def decode_warm_start(buf):
    f = fields(buf)
    return Request(model_id=_int(f, 1), x=_matrix(f, 2), y=_vector(f, 3),
                   steps=_int(f, 4, signed=True), seed=_int(f, 5, signed=True))


def decode_model_ref(buf):
    return Request(model_id=_int(fields(buf), 1))


# Encoders.
def _enc_varint(v):
    if v < 0:
        v += 1 << 64
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field_varint(num, v):
    return b"" if v == 0 else _enc_varint(num << 3 | _VARINT) + _enc_varint(v)


def _field_len(num, payload):
    return _enc_varint(num << 3 | _LEN) + _enc_varint(len(payload)) + payload


def _packed(num, t):
    """Field num holding the float64 values of tensor t, packed."""
    if t.numel() == 0:
        return b""
    raw = t.detach().to(torch.float64).contiguous().numpy().astype("<f8", copy=False).tobytes()
    return _field_len(num, raw)


def upper_rows(t):
    """The upper triangle of the square tensor t, row by row."""
    n = t.shape[0]
    iu = torch.triu_indices(n, n)
    return t[iu[0], iu[1]]


def encode_matrix(t, upper=False):
    """A Matrix message for the 2-D tensor t; upper: t is symmetric and goes
    as its upper triangle."""
    rows, cols = t.shape
    data = upper_rows(t) if upper else t.reshape(-1)
    return (_field_varint(1, rows) + _field_varint(2, cols) + _packed(3, data)
            + (_field_varint(5, 1) if upper else b""))


def encode_vector(t):
    return _packed(1, t.reshape(-1))


def encode_model_ref(model_id):
    return _field_varint(1, model_id)


def encode_num_params(n):
    return _field_varint(1, n)


def encode_gram(g, b):
    """A GramResponse: g's upper triangle and b."""
    return _field_varint(1, g.shape[0]) + _packed(2, upper_rows(g)) + _field_len(3, encode_vector(b))


def encode_predict_shifts(preds):
    return b"".join(_field_len(1, encode_matrix(p)) for p in preds)


def encode_empty(_=None):
    return b""
