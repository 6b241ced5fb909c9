"""The built-in network's Jacobian products from its layers' signals
(signals.py) against the formed Jacobian, in blocks of a few rows, and the
signals' cache: one entry per input tensor, reused, gone with the input,
within its budget. Run by pytest in plugins/torch (and by
TestPythonUnit)."""

import gc
import os
import unittest

import torch

from lazyvi_torch import signals
from fitting import fitted as _fitted

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

EPS = torch.finfo(torch.float64).eps


def fitted(task, classes, opts):
    return _fitted(task, classes, opts, n=90, p=4, seed=5)


def entries(m):
    return [k for k in signals.CACHE.entries if k[0] == id(m)]


class Signals(unittest.TestCase):
    def test_blocks_against_jacobian(self):
        # Blocks of 7 rows, so that every product and pass spans several.
        saved = signals.BLOCK_ROWS
        signals.BLOCK_ROWS = 7
        try:
            for task, classes, hidden in [(0, 0, "16,8"), (1, 0, "6"), (2, 3, "10,5")]:
                with self.subTest(task=task, hidden=hidden):
                    m, x, g = fitted(task, classes, {"hidden": hidden})
                    self.assertIsNotNone(m._layout)
                    j = m.jacobian(x)
                    v = torch.randn(m.num_params, 2, generator=g, dtype=torch.float64)
                    u = torch.randn(j.shape[0], 2, generator=g, dtype=torch.float64)
                    # Both sides sum the same products in other orders.
                    a = u[:, 0].contiguous()
                    for got, want, bound in [(m.jacobian_mul(x, v), j @ v, j.abs() @ v.abs()),
                                             (m.jacobian_tmul(x, u), j.T @ u, j.abs().T @ u.abs()),
                                             (m.jacobian_tvec(x, a), j.T @ a, j.abs().T @ a.abs())]:
                        tol = 8 * max(j.shape) * EPS * bound
                        self.assertTrue(bool(((got - want).abs() <= tol).all()),
                                        "largest difference %.3g" % float((got - want).abs().max()))
        finally:
            signals.BLOCK_ROWS = saved

    def test_user_network_uses_functorch(self):
        m, _, _ = fitted(0, 0, {"module": os.path.join(HERE, "testdata", "tanh.py")})
        self.assertIsNone(m._layout)

    def test_cache(self):
        m, x, g = fitted(0, 0, {"hidden": "8"})
        v = torch.randn(m.num_params, 1, generator=g, dtype=torch.float64)
        xs = x.clone()
        first = m.jacobian_mul(xs, v)
        self.assertEqual(len(entries(m)), 1)
        # The same tensor again: the kept signals, the same answer.
        calls = []
        compute = m._layer_signals
        m._layer_signals = lambda t: calls.append(1) or compute(t)
        try:
            self.assertTrue(torch.equal(m.jacobian_mul(xs, v), first))
            m.jacobian_tmul(xs, torch.ones(xs.shape[0], 1, dtype=torch.float64))
            self.assertEqual(calls, [])
            # Another tensor of the same values: its own entry, the same
            # answer.
            other = x.clone()
            self.assertTrue(torch.equal(m.jacobian_mul(other, v), first))
            self.assertEqual(calls, [1])
            self.assertEqual(len(entries(m)), 2)
        finally:
            del m._layer_signals
        # A freed input takes its entry with it.
        del xs, other
        gc.collect()
        self.assertEqual(len(entries(m)), 0)

    def test_prepared_prediction_is_the_products_pass(self):
        # A single-precision prepared prediction computes the float32
        # view's signals; its products on the same tensor then reuse them.
        m, x, g = fitted(0, 0, {"hidden": "8"})
        xs = x.clone()
        pred = m.predict(xs, single=True)
        view = m._precision(True)
        self.assertEqual(len(entries(view)), 1)
        self.assertTrue(torch.equal(pred, signals.CACHE.entries[(id(view), id(xs))][2].pred.to(torch.float64)))
        calls = []
        compute = view._layer_signals
        view._layer_signals = lambda t: calls.append(1) or compute(t)
        try:
            m.jacobian_mul(xs, torch.ones(m.num_params, 1, dtype=torch.float64), single=True)
        finally:
            del view._layer_signals
        self.assertEqual(calls, [])

    def test_budget(self):
        m, x, _ = fitted(2, 3, {"hidden": "8"})
        sig = m._layer_signals(x)
        size = signals.nbytes(sig)
        self.assertEqual(signals.size(x.shape[0], 3, m._layout, 3, 8), size)
        c = signals.Cache(2 * size + size // 2)
        xs = [x.clone() for _ in range(3)]
        for t in xs[:2]:
            self.assertIs(c.get(m, t, size, lambda: sig), sig)
        # No room but in entries just used: the third input's signals are
        # computed for the call and not kept, and the two keep theirs.
        self.assertIs(c.get(m, xs[2], size, lambda: sig), sig)
        self.assertEqual(list(c.entries), [(id(m), id(xs[0])), (id(m), id(xs[1]))])
        # Once an entry has been idle long enough, its room is taken: the
        # least recently used first.
        for e in c.entries.values():
            e[4] -= c.IDLE
        self.assertIs(c.get(m, xs[2], size, lambda: sig), sig)
        self.assertEqual(list(c.entries), [(id(m), id(xs[1])), (id(m), id(xs[2]))])
        self.assertEqual(c.bytes, 2 * size)
        # Larger than the budget: never kept, never computed.
        self.assertIsNone(signals.Cache(size - 1).get(m, xs[0], size, lambda: sig))

    def test_concurrent_misses(self):
        # Two calls that miss on the same input at once: one entry, its
        # bytes counted once, both answers the kept signals' values.
        m, x, _ = fitted(0, 0, {"hidden": "8"})
        sig = m._layer_signals(x)
        size = signals.nbytes(sig)
        c = signals.Cache(4 * size)
        got = []

        def compute():
            # The second call misses while the first computes.
            if not got:
                got.append(c.get(m, x, size, lambda: m._layer_signals(x)))
            return m._layer_signals(x)

        second = c.get(m, x, size, compute)
        self.assertIs(second, got[0])
        self.assertEqual(len(c.entries), 1)
        self.assertEqual(c.bytes, size)

    def test_no_room_same_bits(self):
        # An input that finds no room gets the same answers as one whose
        # signals are kept: the numbers never depend on the cache's state.
        m, x, g = fitted(0, 0, {"hidden": "16,8"})
        v = torch.randn(m.num_params, 1, generator=g, dtype=torch.float64)
        kept = m.jacobian_mul(x.clone(), v, single=True)
        pred = m.predict(x.clone(), single=True)
        sig = m._precision(True)._layer_signals(m._precision(True)._on(x))
        saved = signals.CACHE
        signals.CACHE = signals.Cache(signals.nbytes(sig))
        try:
            hold = x.clone()
            m.jacobian_mul(hold, v, single=True)  # takes all the room
            self.assertEqual(len(signals.CACHE.entries), 1)
            self.assertTrue(torch.equal(m.jacobian_mul(x.clone(), v, single=True), kept))
            self.assertTrue(torch.equal(m.predict(x.clone(), single=True), pred))
            self.assertEqual(len(signals.CACHE.entries), 1)
        finally:
            signals.CACHE = saved

    def test_above_budget(self):
        # Signals larger than the whole budget are never computed: the
        # products come from functorch, the same values within rounding.
        m, x, g = fitted(0, 0, {"hidden": "16,8"})
        v = torch.randn(m.num_params, 1, generator=g, dtype=torch.float64)
        want = m.jacobian_mul(x.clone(), v)
        saved = signals.CACHE
        signals.CACHE = signals.Cache(0)
        views = [m, m._precision(True)]
        for w in views:
            w._layer_signals = None  # computing signals would fail
        try:
            got = m.jacobian_mul(x.clone(), v)
            pred = m.predict(x.clone(), single=True)
        finally:
            signals.CACHE = saved
            for w in views:
                del w._layer_signals
        self.assertTrue(torch.allclose(got, want, rtol=1e-12, atol=1e-12))
        self.assertTrue(torch.allclose(pred, m.predict(x), rtol=1e-5, atol=1e-5))


if __name__ == "__main__":
    unittest.main()
