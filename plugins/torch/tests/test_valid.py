"""Early stopping on a validation slice, as the Go mlp's: the slice drawn
from the seed alone, the best epoch on it kept, training ended by patience
well before the epoch cap."""

import math

import torch

from lazyvi_torch import model, network


def test_split_valid():
    train, valid = network.split_valid(100, 0.2, 7)
    assert len(valid) == 20 and len(train) == 80
    assert sorted(set(train.tolist()) | set(valid.tolist())) == list(range(100))
    assert train.tolist() == sorted(train.tolist()) and valid.tolist() == sorted(valid.tolist())
    again, other = network.split_valid(100, 0.2, 7), network.split_valid(100, 0.2, 8)
    assert torch.equal(again[1], valid) and not torch.equal(other[1], valid)
    # No slice under 20 rows, nor when it would outnumber the training rows.
    assert network.split_valid(50, 0.2, 7) is None
    assert network.split_valid(100, 0.0, 7) is None
    assert network.split_valid(39, 0.5, 7) is None


def _data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g, dtype=torch.float64)
    y = 1.5 * x[:, 0] - x[:, 1] + 0.5 * torch.randn(n, generator=g, dtype=torch.float64)
    return x, y


def test_fit_stops_on_validation():
    """The defaults on 600 noisy rows: the last 20 epochs did not improve the
    validation loss (patience), the kept epoch's validation loss is reported
    and is the best of the epochs run."""
    x, y = _data(600, 1)
    m = model.new_model(0, 3, 1, 0, {"hidden": "8", "device": "cpu"})
    m.fit(x, y)
    r = m.report
    assert r.stopped_by == "patience", r
    assert r.epochs < 2000 and r.valid_rows == 120
    assert math.isfinite(r.valid_loss) and abs(r.valid_loss - min(m.losses)) <= 1e-12 * max(1.0, r.valid_loss)


def test_fit_without_valid():
    """valid=0 watches the training loss, and reports no slice."""
    x, y = _data(200, 2)
    m = model.new_model(0, 3, 1, 0, {"hidden": "4", "device": "cpu", "valid": "0", "epochs": "30"})
    m.fit(x, y)
    assert m.report.valid_rows == 0 and m.report.epochs <= 30
