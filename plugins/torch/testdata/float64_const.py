"""A user's network for lazyvi-torch's tests: a hidden layer whose forward
pass adds a float64 constant of its own, so that it cannot run in float32."""
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, n_inputs, n_outputs):
        super().__init__()
        self.hidden = nn.Linear(n_inputs, 8)
        self.out = nn.Linear(8, n_outputs)

    def forward(self, x):
        return self.out(torch.tanh(self.hidden(x)) + torch.full((8,), 0.5, dtype=torch.float64))


def build(n_inputs, n_outputs):
    return Net(n_inputs, n_outputs)
