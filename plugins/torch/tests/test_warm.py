"""The warm start's learning-rate schedule (lazyvi_torch.network.warm_rate
and Trainer.continue_) against the Go backends' (nn.WarmRate, the same
points as TestWarmRate). Run by pytest in plugins/torch (and by TestPythonUnit).
"""

import unittest

import torch

from lazyvi_torch import network


class _Head:
    outs = 1

    def loss(self, out, t):
        # d loss / d bias = 1 whatever the outputs: a constant gradient.
        return out.sum() / out.shape[0]


class TestWarmRate(unittest.TestCase):
    def test_points(self):
        for t, steps, want in [(0, 120, 4 / 30), (14, 120, 2), (29, 120, 4), (30, 120, 4), (75, 120, 2),
                               (119, 120, 4 / 90), (0, 1, 4), (0, 3, 4), (2, 3, 4 / 3), (0, 4, 4), (1, 4, 4),
                               (3, 4, 4 / 3)]:
            self.assertAlmostEqual(network.warm_rate(t, steps), want, places=15, msg="warm_rate(%d, %d)" % (t, steps))

    def test_continue(self):
        # Under a constant gradient a fresh Adam's step is its learning rate
        # (up to eps): continue_ moves the bias by lr times the sum of the
        # rates, and leaves the optimiser's rate as it was.
        torch.manual_seed(0)
        net = torch.nn.Linear(1, 1).to(torch.float64)
        with torch.no_grad():
            net.weight.zero_()
            net.bias.zero_()
        net.weight.requires_grad_(False)
        x = torch.zeros(10, 1, dtype=torch.float64)
        tr = network.Trainer(net, _Head(), x, torch.zeros(10, dtype=torch.float64), 4, 0.01,
                             torch.Generator().manual_seed(1))
        tr.continue_(37, None)
        want = -0.01 * sum(network.warm_rate(t, 37) for t in range(37))
        self.assertLess(abs(float(net.bias) - want), 2e-8 * abs(want))
        self.assertEqual(tr.opt.param_groups[0]["lr"], 0.01)


if __name__ == "__main__":
    unittest.main()
