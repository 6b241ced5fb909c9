"""The network in memory as vi is served it (lazyvi_torch.live): it sees
its inputs as trained although vi standardises them, the full model is the
network as it is, the models vi trains are re-initialised copies, and the
options that would name another network are refused."""

import numpy as np
import pytest
import torch

from lazyvi_plugin import ModelSpec, UsageError
from lazyvi_torch import live


def network():
    torch.manual_seed(3)
    return torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Linear(5, 1))


X = np.random.default_rng(1).normal(loc=[10.0, -2.0, 0.0], scale=[3.0, 0.5, 1.0], size=(40, 3))
X[:, 2] = 7.0  # a constant column: vi only centres it


def standardised(x):
    mean, sd = x.mean(axis=0), x.std(axis=0, ddof=1)
    return (x - mean) / np.where(sd > 0, sd, 1.0)


def test_served_network_undoes_vi_standardisation():
    net = network()
    served = live.served_network(net, X)
    with torch.no_grad():
        want = net(torch.from_numpy(X).float()).double()
        got = served(torch.from_numpy(standardised(X)))
    assert torch.allclose(got, want, atol=1e-5)  # net computes in float32
    # A copy: training the caller's network on does not change it.
    with torch.no_grad():
        net[0].weight.add_(1)
        assert torch.allclose(served(torch.from_numpy(standardised(X))), got, atol=0)


def test_full_model_is_the_network_and_others_are_reinitialised():
    served = live.served_network(network(), X)
    b = live.LiveBackend(served)
    z, y = torch.from_numpy(standardised(X)), torch.zeros(len(X), dtype=torch.float64)
    full = b.new_model(ModelSpec(task=0, inputs=3, seed=1, options={"weights": live.LIVE}, pretrained=True))
    full.fit(z, y, lambda: True)
    with torch.no_grad():
        assert torch.equal(full.predict(z), served(z))
    assert full.report.loaded and full.num_params == 3 * 5 + 5 + 5 + 1
    fresh = b._build(3, 1)
    assert not torch.equal(fresh[1][0].weight, served[1][0].weight)
    assert torch.equal(fresh[0].mean, served[0].mean)  # the statistics stay


@pytest.mark.parametrize("opts, pretrained, msg", [
    ({"module": "net.py"}, False, "option module: the network is the one in memory"),
    ({"hidden": "8"}, False, "option hidden"),
    ({"weights": "w.pt"}, True, "want memory"),
    ({}, True, "want the option weights=memory"),
])
def test_refused(opts, pretrained, msg):
    b = live.LiveBackend(live.served_network(network(), X))
    with pytest.raises(UsageError, match=msg):
        b.new_model(ModelSpec(task=0, inputs=3, seed=1, options=opts, pretrained=pretrained))


def test_inputs_must_match():
    b = live.LiveBackend(live.served_network(network(), X))
    with pytest.raises(UsageError, match="takes 3 features, the data has 4"):
        b.new_model(ModelSpec(task=0, inputs=4, seed=1))
