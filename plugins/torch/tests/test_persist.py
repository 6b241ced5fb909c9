"""Saved and loaded models (Model.save_state, load_state): a loaded model
answers as the saved one, bit for bit; a state of another model, or not a
state, is a usage error."""

import pytest
import torch

from lazyvi_torch import model
from lazyvi_torch.errors import UsageError


def fitted(task=0, classes=0, p=4, seed=3):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(80, p, generator=g, dtype=torch.float64)
    y = x[:, 0] - x[:, 1] if task == 0 else torch.randint(0, max(classes, 2), (80,), generator=g).to(torch.float64)
    m = model.new_model(task, p, seed, classes, {"hidden": "6", "epochs": "3"})
    m.fit(x, y)
    return m, x


@pytest.mark.parametrize("task, classes", [(0, 0), (1, 0), (2, 3)])
def test_round_trip(task, classes):
    m, x = fitted(task, classes)
    loaded = model.new_model(task, 4, 99, classes, {"hidden": "6"})
    loaded.load_state(m.save_state())
    assert loaded.num_params == m.num_params
    assert torch.equal(loaded.predict(x), m.predict(x))
    assert torch.equal(loaded.jacobian(x), m.jacobian(x))
    assert loaded.report.epochs == m.report.epochs and loaded.report.stopped_by == m.report.stopped_by
    assert loaded.report.architecture == m.report.architecture


def test_refused():
    m, _ = fitted()
    state = m.save_state()
    with pytest.raises(UsageError, match="inputs"):
        model.new_model(0, 5, 1, 0, {"hidden": "6"}).load_state(state)
    with pytest.raises(UsageError, match="does not fit"):
        model.new_model(0, 4, 1, 0, {"hidden": "7"}).load_state(state)
    with pytest.raises(UsageError, match="not a saved model state"):
        model.new_model(0, 4, 1, 0, {"hidden": "6"}).load_state(b"not a state")


def test_report():
    m, _ = fitted()
    assert m.report.stopped_by in ("patience", "cap") and 1 <= m.report.epochs <= 3
    assert m.report.architecture.startswith("Linear(in_features=4, out_features=6")
    assert m.report.architecture.endswith("; %d parameters" % m.num_params)
    assert not m.report.loaded
