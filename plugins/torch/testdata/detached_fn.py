"""A user's network for lazyvi-torch's tests: a softplus activation written
as a torch.autograd.Function whose backward is computed off the graph (as
one written with numpy would be), so that neither functorch (torch 1.13)
nor a double backward pass can differentiate it: the plugin's Jacobian
products then come from Jacobian blocks."""
import torch
from torch import nn


class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return torch.nn.functional.softplus(z)

    @staticmethod
    def backward(ctx, g):
        (z,) = ctx.saved_tensors
        return (g * torch.sigmoid(z)).detach()


class Act(nn.Module):
    def forward(self, z):
        return Softplus.apply(z)


def build(n_inputs, n_outputs):
    return nn.Sequential(nn.Linear(n_inputs, 12), Act(), nn.Linear(12, n_outputs))
