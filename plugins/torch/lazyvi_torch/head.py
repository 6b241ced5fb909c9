"""The output layer as the task sees it, as in the Go backends' nn.Head: the
link from the network's raw outputs to predictions, the training loss, and
the response checks and scaling."""

import math

import torch
import torch.nn.functional as F

from .errors import UsageError
from .options import NAME

REGRESSION, BINARY, MULTICLASS = 0, 1, 2
TASK_NAMES = {REGRESSION: "regression", BINARY: "binary", MULTICLASS: "multiclass"}


class Head:
    """outs raw outputs per sample (K for multiclass, else 1); for regression
    the prediction is mu + sd * output (mu = 0, sd = 1 for a network trained
    outside lazyvi, which predicts the response itself)."""

    def __init__(self, task: int, inputs: int, classes: int) -> None:
        outs = 1
        if task == MULTICLASS:
            if classes < 2:
                raise UsageError("%s: multiclass needs at least 2 classes, got %d" % (NAME, classes))
            outs = classes
        elif task not in (REGRESSION, BINARY):
            raise UsageError("%s: unsupported task %d" % (NAME, task))
        if inputs < 1:
            raise UsageError("%s: model needs at least one input column, got %d" % (NAME, inputs))
        self.task, self.outs = task, outs
        self.mu, self.sd = 0.0, 1.0

    @property
    def task_name(self) -> str:
        return TASK_NAMES[self.task]

    def rows_per_sample(self) -> int:
        """Jacobian rows per sample: K for multiclass, else 1."""
        return self.outs if self.task == MULTICLASS else 1

    def _finite(self, y):
        bad = (~torch.isfinite(y)).nonzero()
        if len(bad):
            raise UsageError("%s: response is not finite in row %d" % (NAME, int(bad[0, 0])))

    def standardize(self, y: torch.Tensor) -> None:
        """Sets mu and sd to the mean and population standard deviation of a
        regression response (sd = 1 when it is constant)."""
        self.mu, self.sd = 0.0, 1.0
        if self.task != REGRESSION:
            return
        self._finite(y)
        self.mu = float(y.mean())
        sd = math.sqrt(float(((y - self.mu) ** 2).mean()))
        if sd > 0:
            self.sd = sd

    def targets(self, y: torch.Tensor) -> torch.Tensor:
        """Checks the responses and returns the training targets: the
        standardised response for regression, the labels otherwise (long for
        multiclass)."""
        if self.task == BINARY:
            bad = ((y != 0) & (y != 1)).nonzero()
            if len(bad):
                i = int(bad[0, 0])
                raise UsageError("%s: binary response must be 0 or 1, row %d is %s" % (NAME, i, _g(y[i])))
            return y.clone()
        if self.task == MULTICLASS:
            bad = ((y < 0) | (y >= self.outs) | (y != torch.trunc(y))).nonzero()
            if len(bad):
                i = int(bad[0, 0])
                raise UsageError("%s: a %d-class response must be a label 0..%d, row %d is %s"
                                 % (NAME, self.outs, self.outs - 1, i, _g(y[i])))
            return y.long()
        self._finite(y)
        return (y - self.mu) / self.sd

    def loss(self, z: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """The mean training loss of raw outputs z (n x outs) against
        targets t: squared error, log-loss on the logit, or softmax
        cross-entropy."""
        if self.task == MULTICLASS:
            return F.cross_entropy(z, t)
        if self.task == BINARY:
            return F.binary_cross_entropy_with_logits(z[:, 0], t)
        return ((z[:, 0] - t) ** 2).mean()

    def link(self, z: torch.Tensor) -> torch.Tensor:
        """Predictions from raw outputs z (n x outs)."""
        if self.task == MULTICLASS:
            return torch.softmax(z, dim=1)
        if self.task == BINARY:
            return torch.sigmoid(z)
        return self.mu + self.sd * z


def _g(v):
    return "%g" % float(v)
