"""A user's network for lazyvi-torch's tests and docs: two tanh layers."""
from torch import nn


def build(n_inputs, n_outputs):
    return nn.Sequential(
        nn.Linear(n_inputs, 32), nn.Tanh(),
        nn.Linear(32, 32), nn.Tanh(),
        nn.Linear(32, n_outputs),
    )
