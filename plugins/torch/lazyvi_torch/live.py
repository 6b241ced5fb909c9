"""A network of this process served to vi: the torch backend with the
network in memory instead of a module= file and a weights= state dict.

vi standardises the features before any model sees them (each column
centred and scaled by the training rows' mean and standard deviation, n - 1
in the denominator, a constant column only centred). A network trained in a
notebook takes the features as they are, so the served network is
Sequential(Unstandardise(mean, sd), network): it undoes vi's
standardisation, and the user's network sees its own inputs. Its
parameters are the network's, in the same order.
"""

import copy
from typing import Callable, Optional

import numpy as np
import torch
from torch import nn

from lazyvi_plugin import ModelSpec, Option

from . import network
from . import options as torch_options
from .errors import UsageError
from .head import Head
from .model import Model
from .options import NAME
from .server import TorchBackend

# LIVE is the weights= value that names the network in memory: it makes
# vi build the full model pretrained (loaded, not trained), as weights=FILE
# does for a state dict on disk.
LIVE = "memory"


class Unstandardise(nn.Module):
    """x * sd + mean, column by column: the inverse of vi's
    standardisation, with the statistics as buffers (not parameters)."""

    def __init__(self, mean: torch.Tensor, sd: torch.Tensor) -> None:
        super().__init__()
        self.register_buffer("mean", mean.clone())
        self.register_buffer("sd", sd.clone())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.sd + self.mean

    def extra_repr(self) -> str:
        return "%d features" % self.mean.numel()


def vi_statistics(x: np.ndarray):
    """The mean and standard deviation vi standardises the columns of the
    training rows x with (n - 1; a constant column's sd is 1)."""
    mean = x.mean(axis=0)
    sd = x.std(axis=0, ddof=1) if x.shape[0] > 1 else np.zeros(x.shape[1])
    return mean, np.where(sd > 0, sd, 1.0)


def served_network(net: nn.Module, x: np.ndarray) -> nn.Module:
    """The network vi is served for net trained on features like x (vi's
    training rows): a float64 copy of net behind Unstandardise, on the CPU.
    Later changes to net do not reach it."""
    mean, sd = vi_statistics(x)
    inner = copy.deepcopy(net).to("cpu", torch.float64)
    return nn.Sequential(Unstandardise(torch.from_numpy(mean), torch.from_numpy(sd)), inner)


def _reset(net: nn.Module) -> None:
    """Re-initialises every submodule that knows how (reset_parameters),
    from torch's generator."""
    for m in net.modules():
        if m is not net and hasattr(m, "reset_parameters"):
            m.reset_parameters()


class LiveBackend(TorchBackend):
    """The torch backend whose network is served, a network in memory
    (served_network's). The full model (weights=memory) is that network as
    it is; a model trained by vi (retrain, Shapley, ROAR) is a copy of it
    re-initialised from the seed and trained with the options' epochs, lr,
    batch, ..., or by fit(network, x, y, task) when given (x standardised
    as vi feeds it; the network's first layer undoes that)."""

    options = tuple(Option(n, LIVE if n == "weights" else torch_options.DEFAULTS[n],
                           "the network in memory: %s for the full model (pretrained, not trained)" % LIVE if n == "weights" else u)
                    for n, u in torch_options.INFO if n not in ("module", "hidden"))

    def __init__(self, served: nn.Module, fit: Optional[Callable] = None) -> None:
        self.template = served
        state = {k: v.detach().clone() for k, v in served.state_dict().items()}
        self.user = network.UserFile("<in memory: %s>" % type(served[-1]).__name__, self._build, fit, state)

    def _build(self, n_inputs: int, n_outputs: int) -> nn.Module:
        net = copy.deepcopy(self.template)
        _reset(net)
        return net

    def new_model(self, spec: ModelSpec) -> Model:
        Head(spec.task, spec.inputs, spec.classes)
        opts = dict(spec.options)
        for k in ("module", "hidden"):
            if k in opts:
                raise UsageError("%s: option %s: the network is the one in memory" % (NAME, k))
        weights = opts.pop("weights", "")
        if weights not in ("", LIVE):
            raise UsageError("%s: option weights: %r, want %s (the network in memory)" % (NAME, weights, LIVE))
        if spec.pretrained and weights != LIVE:
            raise UsageError("%s: a pretrained model is the network in memory: want the option weights=%s" % (NAME, LIVE))
        inputs = self.template[0].mean.numel()
        if spec.inputs != inputs:
            raise UsageError("%s: the network in memory takes %d features, the data has %d" % (NAME, inputs, spec.inputs))
        return Model(spec.task, spec.inputs, spec.seed, spec.classes, torch_options.parse(opts), self.user, spec.pretrained)
