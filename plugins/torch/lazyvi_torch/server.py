"""The plugin process: the torch backend (the models of model.py) served by
lazyvi_plugin, the kit that speaks go-plugin's handshake and the backend
protocol (proto/lazyvi/backend/v2)."""

import numpy as np
import torch

import lazyvi_plugin
from lazyvi_plugin import Capabilities, ModelSpec, Option

from .model import Model, new_model
from .options import DEFAULTS, INFO, NAME


class TorchBackend(lazyvi_plugin.Backend):
    """The torch backend: the built-in ReLU network, or the user's module=
    network, trained or loaded (weights=)."""

    name = NAME
    capabilities = Capabilities(gradients=True, kernel=True, classification=True, multiclass=True,
                                warm_start=True, persist=True, matrix_free=True, single_precision=True,
                                single_kernel=True)
    options = tuple(Option(n, DEFAULTS[n], u) for n, u in INFO)

    def new_model(self, spec: ModelSpec) -> Model:
        return new_model(spec.task, spec.inputs, spec.seed, spec.classes, spec.options, spec.pretrained)

    def native(self, a: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(a)


def main() -> int:
    """The lazyvi-torch command."""
    torch.set_default_dtype(torch.float64)
    return lazyvi_plugin.serve(TorchBackend(), "vi estimate --plugin lazyvi-torch")
