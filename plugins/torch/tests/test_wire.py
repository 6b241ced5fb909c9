"""The hand-written codec (lazyvi_torch.wire) against the generated classes:
what protobuf encodes, wire decodes, and the other way round. Run by
TestPythonUnit (wire_test.go) or
    cd plugins/torch && python3 -m unittest discover -s tests
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from lazyvi_torch import wire  # noqa: E402
from lazyvi_torch.pb import backend_pb2 as pb  # noqa: E402


def matrix(rows, cols, seed=0):
    return np.random.default_rng(seed).standard_normal(rows * cols)


class Decode(unittest.TestCase):
    def test_warm_start(self):
        data = matrix(3, 2)
        msg = pb.WarmStartRequest(model_id=7, x=pb.Matrix(rows=3, cols=2, data=data, key=b"k\x00y"),
                                  y=pb.Vector(data=[1.5, -2, 0]), steps=-1, seed=-123456789012)
        r = wire.decode_warm_start(msg.SerializeToString())
        self.assertEqual((r.model_id, r.steps, r.seed), (7, -1, -123456789012))
        self.assertEqual((r.x.rows, r.x.cols, r.x.key, r.x.upper), (3, 2, b"k\x00y", False))
        np.testing.assert_array_equal(r.x.data, data)
        np.testing.assert_array_equal(r.y.numpy(), [1.5, -2, 0])

    def test_kernel_absent_and_empty(self):
        r = wire.decode_kernel(pb.KernelRequest(model_id=1, x1=pb.Matrix(rows=2, cols=1, data=[1, 2])).SerializeToString())
        self.assertIsNone(r.x2)
        self.assertFalse(r.allow_upper)
        r = wire.decode_kernel(pb.KernelRequest(model_id=1, x1=pb.Matrix(), x2=pb.Matrix(), allow_upper=True).SerializeToString())
        self.assertIsNotNone(r.x2)
        self.assertEqual((r.x2.rows, r.x2.cols, len(r.x2.data)), (0, 0, 0))
        self.assertTrue(r.allow_upper)

    def test_reference(self):
        r = wire.decode_matrix_request(pb.MatrixRequest(model_id=2, x=pb.Matrix(rows=5, cols=4, key=b"key")).SerializeToString())
        self.assertEqual((r.x.rows, r.x.cols, r.x.key, len(r.x.data)), (5, 4, b"key", 0))

    def test_shifts(self):
        s1 = pb.Shift(x=pb.Matrix(rows=1, cols=2, data=[1, 2]), dtheta=pb.Vector(data=[0.5]))
        s2 = pb.Shift(x=pb.Matrix(rows=1, cols=2, data=[3, 4]), x_train=pb.Matrix(rows=1, cols=2, data=[5, 6]), a=pb.Vector(data=[7]))
        r = wire.decode_predict_shifts(pb.PredictShiftsRequest(model_id=3, shifts=[s1, s2]).SerializeToString())
        self.assertEqual(len(r.shifts), 2)
        self.assertIsNone(r.shifts[0].x_train)
        np.testing.assert_array_equal(r.shifts[1].x_train.data, [5, 6])
        np.testing.assert_array_equal(r.shifts[1].a.numpy(), [7])
        self.assertEqual(r.shifts[1].dtheta.numel(), 0)

    def test_jacobian_product(self):
        v = matrix(4, 2, 3)
        msg = pb.JacobianProductRequest(model_id=9, x=pb.Matrix(rows=2, cols=1, key=b"kx"),
                                        v=pb.Matrix(rows=4, cols=2, data=v))
        r = wire.decode_jacobian_product(msg.SerializeToString())
        self.assertEqual((r.model_id, r.x.rows, r.x.cols, r.x.key, len(r.x.data)), (9, 2, 1, b"kx", 0))
        self.assertEqual((r.v.rows, r.v.cols, r.v.key), (4, 2, b""))
        np.testing.assert_array_equal(r.v.data, v)
        self.assertIsNone(wire.decode_jacobian_product(pb.JacobianProductRequest(model_id=1).SerializeToString()).v)

    def test_unpacked_and_split_doubles(self):
        # Field 3 of Matrix as single doubles (wire type 1) and as two
        # packed pieces: decoders must accept both.
        import struct
        unpacked = b"".join(b"\x19" + struct.pack("<d", v) for v in (1.0, 2.0))
        m = wire.Matrix(wire.fields(b"\x08\x01\x10\x02" + unpacked))
        np.testing.assert_array_equal(m.data, [1, 2])
        piece = lambda vs: b"\x1a" + bytes([8 * len(vs)]) + struct.pack("<%dd" % len(vs), *vs)
        m = wire.Matrix(wire.fields(b"\x08\x01\x10\x03" + piece([1.0]) + piece([2.0, 3.0])))
        np.testing.assert_array_equal(m.data, [1, 2, 3])

    def test_malformed(self):
        with self.assertRaises(wire.WireError):
            wire.decode_matrix_request(b"\x12\x05\x08")
        with self.assertRaises(wire.WireError):
            wire.Matrix(wire.fields(b"\x1a\x03abc"))  # 3 bytes of doubles


class Encode(unittest.TestCase):
    def test_matrix(self):
        t = torch.tensor(matrix(4, 3, 1)).reshape(4, 3)
        m = pb.Matrix.FromString(wire.encode_matrix(t))
        self.assertEqual((m.rows, m.cols, m.upper), (4, 3, False))
        np.testing.assert_array_equal(np.array(m.data), t.reshape(-1).numpy())

    def test_upper(self):
        a = torch.tensor(matrix(3, 3, 2)).reshape(3, 3)
        s = a + a.T
        m = pb.Matrix.FromString(wire.encode_matrix(s, upper=True))
        self.assertTrue(m.upper)
        np.testing.assert_array_equal(np.array(m.data), [s[0, 0], s[0, 1], s[0, 2], s[1, 1], s[1, 2], s[2, 2]])

    def test_gram_and_shifts(self):
        g = torch.tensor([[1.0, 2.0], [2.0, 5.0]])
        r = pb.GramResponse.FromString(wire.encode_gram(g, torch.tensor([3.0, -4.0])))
        self.assertEqual(r.n, 2)
        self.assertEqual(list(r.upper), [1, 2, 5])
        self.assertEqual(list(r.b.data), [3, -4])
        preds = [torch.ones(2, 1), torch.zeros(1, 3)]
        r = pb.PredictShiftsResponse.FromString(wire.encode_predict_shifts(preds))
        self.assertEqual([(p.rows, p.cols, len(p.data)) for p in r.preds], [(2, 1, 2), (1, 3, 3)])

    def test_ids(self):
        self.assertEqual(pb.ModelRef.FromString(wire.encode_model_ref(2 ** 40)).model_id, 2 ** 40)
        self.assertEqual(pb.NumParamsResponse.FromString(wire.encode_num_params(401)).num_params, 401)
        self.assertEqual(list(pb.Vector.FromString(wire.encode_vector(torch.tensor([1.0, 2.0]))).data), [1, 2])


if __name__ == "__main__":
    unittest.main()
