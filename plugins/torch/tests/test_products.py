"""The matrix-free Jacobian products (Model.jacobian_mul, jacobian_tmul)
against the formed Jacobian: every task, row blocks far smaller than the
rows, the double-backward fallback for a network functorch cannot
transform, and the Jacobian blocks for one whose backward cannot be
differentiated again. Run by pytest in plugins/torch (and by TestPythonUnit).
"""

import os
import threading
import unittest

import torch

from lazyvi_torch import model
from lazyvi_torch.errors import ModelError
from fitting import fitted

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

EPS = torch.finfo(torch.float64).eps


class Products(unittest.TestCase):
    def check(self, m, x, g):
        j = m.jacobian(x)
        v = torch.randn(m.num_params, 3, generator=g, dtype=torch.float64)
        u = torch.randn(j.shape[0], 3, generator=g, dtype=torch.float64)
        # Both sides sum the same M (or n K) products in other orders, from
        # derivatives computed in other orders: their difference is within
        # a few roundings of each term's size, summed.
        for got, want, bound in [(m.jacobian_mul(x, v), j @ v, j.abs() @ v.abs()),
                                 (m.jacobian_tmul(x, u), j.T @ u, j.abs().T @ u.abs())]:
            self.assertEqual(got.shape, want.shape)
            tol = 8 * max(j.shape) * EPS * bound
            self.assertTrue(bool(((got - want).abs() <= tol).all()),
                            "largest difference %.3g" % float((got - want).abs().max()))

    def test_tasks(self):
        for task, classes in [(0, 0), (1, 0), (2, 4)]:
            with self.subTest(task=task):
                m, x, g = fitted(task, classes, {"hidden": "16,8"})
                self.check(m, x, g)
                # Blocks of a few rows: the same products.
                saved = model.JACOBIAN_BYTES
                model.JACOBIAN_BYTES = 4 * m._row_bytes(None)
                try:
                    self.assertLess(m._product_rows(None, x.shape[0]), 5)
                    self.check(m, x, g)
                finally:
                    model.JACOBIAN_BYTES = saved

    def test_double_backward(self):
        for task, classes in [(0, 0), (2, 3)]:
            with self.subTest(task=task):
                m, x, g = fitted(task, classes, {"module": os.path.join(HERE, "testdata", "autograd_fn.py")})
                self.check(m, x, g)
                self.assertFalse(m._forward_ad, "functorch.jvp transformed an autograd.Function")
                self.assertTrue(m._double_backward, "a differentiable backward not differentiated again")

    def test_detached_backward(self):
        # A backward computed off the graph: double backward passes would
        # drop the layers below it from J V without an error (25% off on
        # this network); the products come from Jacobian blocks instead.
        for task, classes in [(0, 0), (2, 3)]:
            with self.subTest(task=task):
                m, x, g = fitted(task, classes, {"module": os.path.join(HERE, "testdata", "detached_fn.py")})
                self.check(m, x, g)
                self.assertFalse(m._double_backward, "a detached backward differentiated again")

    def test_concurrent(self):
        # Products and Jacobians from several threads at once (the plugin
        # serves concurrent calls): each answer as alone, bit for bit.
        m, x, g = fitted(2, 3, {"hidden": "8"})
        v = torch.randn(m.num_params, 2, generator=g, dtype=torch.float64)
        u = torch.randn(3 * x.shape[0], 2, generator=g, dtype=torch.float64)
        calls = [lambda: m.jacobian_mul(x, v), lambda: m.jacobian_tmul(x, u), lambda: m.jacobian(x)]
        want = [c() for c in calls]
        bad = []

        def work(i):
            for _ in range(10):
                try:
                    if not torch.equal(calls[i % 3](), want[i % 3]):
                        bad.append("call %d differs" % (i % 3))
                except Exception as e:  # reported below, not lost in the thread
                    bad.append(repr(e))

        threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(bad, [])

    def test_shapes(self):
        m, x, _ = fitted(2, 3, {"hidden": "4"})
        M, n = m.num_params, 3 * x.shape[0]
        for op, v in [(m.jacobian_mul, torch.zeros(M + 1, 2)), (m.jacobian_mul, torch.zeros(M, 0)),
                      (m.jacobian_tmul, torch.zeros(n - 1, 1)), (m.jacobian_tmul, torch.zeros(0, 0))]:
            with self.assertRaises(ModelError):
                op(x, v)
        with self.assertRaises(ModelError):
            m.jacobian_mul(x[:, :2], torch.zeros(M, 1))


if __name__ == "__main__":
    unittest.main()


class LayerKernel(unittest.TestCase):
    """Model.kernel of the built-in network, from its layers' signals,
    against the formed Jacobian's J1 J2^T: regression, binary and
    multiclass, one layer or two, symmetric and cross."""

    def test_against_jacobian(self):
        for task, classes, hidden in [(0, 0, "16,8"), (1, 0, "16,8"), (0, 0, "12"), (2, 3, "16,8")]:
            with self.subTest(task=task, hidden=hidden):
                m, x, g = fitted(task, classes, {"hidden": hidden})
                self.assertIsNotNone(m._layer_kernel(x, None))
                x2 = torch.randn(30, x.shape[1], generator=g, dtype=torch.float64)
                j1, j2 = m.jacobian(x), m.jacobian(x2)
                for got, a, b in [(m.kernel(x, None), j1, j1), (m.kernel(x, x2), j1, j2)]:
                    want = a @ b.T
                    # Both sum the same per-parameter products, grouped by
                    # layer or not: within a few roundings of the sum of
                    # the terms' sizes.
                    tol = 8 * a.shape[1] * EPS * (a.abs() @ b.abs().T)
                    self.assertEqual(got.shape, want.shape)
                    self.assertTrue(bool(((got - want).abs() <= tol).all()),
                                    "largest difference %.3g" % float((got - want).abs().max()))
                sym = m.kernel(x, None)
                self.assertTrue(bool((sym == sym.T).all()))
