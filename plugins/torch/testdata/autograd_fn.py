"""A user's network for lazyvi-torch's tests: a softplus activation written
as a torch.autograd.Function, which functorch (torch 1.13) refuses to
transform, so that the plugin's fallbacks (per-row backward passes for the
Jacobian, double backward passes for Jacobian products) serve it. Its
backward is made of differentiable torch operations, so that it can be
differentiated again."""
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
        return g * torch.sigmoid(z)


class Act(nn.Module):
    def forward(self, z):
        return Softplus.apply(z)


def build(n_inputs, n_outputs):
    return nn.Sequential(nn.Linear(n_inputs, 12), Act(), nn.Linear(12, n_outputs))
