"""Single precision (the single= argument of Model.jacobian_mul,
jacobian_tmul, jacobian_tvec, kernel and predict, which lazyvi asks for at
scale)
against float64: within float32's rounding, computed in float32 (further
from float64 than float64's own rounding), made from one float32 copy of
the network, and served in float64 by a network that cannot run in
float32. Run by pytest in plugins/torch (and by TestPythonUnit)."""

import os
import unittest

import torch

from fitting import fitted as _fitted

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

EPS32 = 2.0 ** -24


def fitted(task, classes, opts):
    return _fitted(task, classes, opts, n=150, p=5, seed=3, epochs="3")


class Single(unittest.TestCase):
    def compare(self, got, want, bound, k, name):
        # Each value is a sum of products of rounded inputs and signals,
        # each layer's sums accumulated in float32: its error is within a
        # few roundings per term along the longest chain of sums (k: the
        # inputs and the widths), relative to the largest absolute term.
        self.assertEqual(got.shape, want.shape, name)
        self.assertEqual(got.dtype, torch.float64, name)
        diff = float((got - want).abs().max())
        scale = float(bound.max())
        self.assertLessEqual(diff, 8 * k * EPS32 * scale, "%s: largest difference %.3g of %.3g" % (name, diff, scale))
        # float64 would agree to about 1e-16 of the scale: the answer was
        # computed in float32.
        self.assertGreater(diff, 1e-12 * scale, "%s: the same as float64's" % name)

    def test_products_and_kernel(self):
        for task, classes, hidden in [(0, 0, "16,8"), (1, 0, "16,8"), (2, 3, "12")]:
            with self.subTest(task=task, hidden=hidden):
                m, x, g = fitted(task, classes, {"hidden": hidden})
                k = x.shape[1] + sum(int(w) for w in hidden.split(","))
                j = m.jacobian(x)
                v = torch.randn(m.num_params, 3, generator=g, dtype=torch.float64)
                u = torch.randn(j.shape[0], 3, generator=g, dtype=torch.float64)
                a = u[:, 0].contiguous()
                self.compare(m.jacobian_mul(x, v, single=True), j @ v, j.abs() @ v.abs(), k, "J V")
                # The predictions' size scale: the output's, at least 1
                # (class probabilities).
                pred = m.predict(x)
                self.compare(m.predict(x, single=True), pred, pred.abs().clamp(min=1.0), k, "predictions")
                self.compare(m.jacobian_tmul(x, u, single=True), j.T @ u, j.abs().T @ u.abs(), k + x.shape[0], "J^T U")
                self.compare(m.jacobian_tvec(x, a, single=True), j.T @ a, j.abs().T @ a.abs(), k + x.shape[0], "J^T a")
                x2 = x[:40]
                j2 = j[:40 * (classes if task == 2 else 1)]
                self.compare(m.kernel(x, x2, single=True), j @ j2.T, j.abs() @ j2.abs().T, k, "kernel")
                sym = m.kernel(x, None, single=True)
                self.compare(sym, j @ j.T, j.abs() @ j.abs().T, k, "symmetric kernel")
                self.assertTrue(bool((sym == sym.T).all()))
                # One float32 copy serves every call; float64 calls are
                # the model's own, unchanged.
                self.assertIs(m._precision(True), m._precision(True))
                self.assertEqual(m._precision(True).dtype, torch.float32)
                self.assertTrue(torch.equal(m.jacobian_mul(x, v), m.jacobian_mul(x, v, single=False)))

    def test_user_module(self):
        # A user's network through functional calls: float32 too.
        m, x, g = fitted(0, 0, {"module": os.path.join(HERE, "testdata", "tanh.py")})
        j = m.jacobian(x)
        v = torch.randn(m.num_params, 2, generator=g, dtype=torch.float64)
        self.compare(m.jacobian_mul(x, v, single=True), j @ v, j.abs() @ v.abs(), x.shape[1] + 64, "J V")

    def test_float64_network(self):
        # A network with a float64 constant of its own cannot run in
        # float32: single precision is served in float64, from then on.
        m, x, g = fitted(0, 0, {"module": os.path.join(HERE, "testdata", "float64_const.py")})
        v = torch.randn(m.num_params, 2, generator=g, dtype=torch.float64)
        want = m.jacobian_mul(x, v)
        self.assertTrue(torch.equal(m.jacobian_mul(x, v, single=True), want))
        self.assertFalse(m._single_ok)
        self.assertIs(m._precision(True), m)
        self.assertTrue(torch.equal(m.jacobian_mul(x, v, single=True), want))

    def test_float32_model(self):
        # dtype=float32 computes in float32 already: single is the model.
        m, _, _ = fitted(0, 0, {"hidden": "8", "dtype": "float32"})
        self.assertIs(m._precision(True), m)


if __name__ == "__main__":
    unittest.main()
