"""The backend's options (ModelSpec.Options).

The training options (hidden, epochs, patience, tol, lr, batch, valid) are
named and checked as the Go mlp's are, and early stopping is the Go mlp's:
up to 2000 epochs, stopping after 20 without progress on a validation slice
of a fifth of the training rows, the best epoch on it kept. The minibatch
size is this plugin's own (256: PyTorch's per-step overhead is larger than
the Go mlp's). module= and weights= bring a user's network, device= and
dtype= say where and in what precision it computes.
"""

import math
import os
from typing import Dict, List

import torch

from .errors import UsageError

NAME = "torch"

DEFAULTS = {
    "hidden": "50",
    "epochs": "2000",
    "patience": "20",
    "tol": "0.0001",
    "lr": "0.001",
    "batch": "256",
    "valid": "0.2",
    "module": "",
    "weights": "",
    "device": "",
    "dtype": "float64",
}

INFO = [
    ("hidden", "comma-separated widths of the hidden ReLU layers of the built-in network, input side first (\"100,50\"); not with module"),
    ("epochs", "maximum number of training epochs (passes over the training set)"),
    ("patience", "stop after this many consecutive epochs without a relative improvement of the validation loss (the training loss with valid=0) by more than tol"),
    ("tol", "relative improvement of the validation loss that counts as progress for early stopping"),
    ("lr", "Adam learning rate"),
    ("batch", "minibatch size (capped at the number of training rows)"),
    ("valid", "share of the training rows held out (seeded) as the validation slice that early stopping watches; the best epoch on it is kept (0: watch the training loss)"),
    ("module", "a Python file defining build(n_inputs, n_outputs) -> torch.nn.Module (and optionally fit(model, x, y, task)): the network instead of the built-in one"),
    ("weights", "a state dict (torch.save(model.state_dict(), FILE)) of the network: the full model is loaded from it, not trained; the other models (a feature removed: retrain, Shapley, ROAR) are trained from build as usual"),
    ("device", "where the network computes: cpu, cuda, cuda:N or mps (default: cuda when available, else cpu)"),
    ("dtype", "float64, or float32 (faster on accelerators, about 7 significant digits)"),
]


class Config:
    """Parsed options."""

    def __init__(self) -> None:
        self.hidden: List[int] = [50]
        self.epochs = 2000
        self.patience = 20
        self.tol = 1e-4
        self.lr = 1e-3
        self.batch = 256
        self.valid = 0.2
        self.module = ""   # absolute path, or "" for the built-in network
        self.weights = ""  # absolute path, or ""
        self.device = default_device()
        self.dtype = torch.float64


def default_device() -> torch.device:
    """cuda when torch sees a GPU, else cpu."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _device(k: str, v: str) -> torch.device:
    try:
        d = torch.device(v)
    except RuntimeError:
        d = None
    if d is None or d.type not in ("cpu", "cuda", "mps"):
        raise UsageError("%s: option %s: bad value %r (want cpu, cuda, cuda:N or mps)" % (NAME, k, v))
    if d.type == "cuda":
        if not torch.cuda.is_available():
            raise UsageError("%s: option %s: %s asked, but this torch sees no CUDA device" % (NAME, k, v))
        if d.index is not None and d.index >= torch.cuda.device_count():
            raise UsageError("%s: option %s: %s asked, but this torch sees %d CUDA devices"
                             % (NAME, k, v, torch.cuda.device_count()))
    if d.type == "mps" and not (hasattr(torch.backends, "mps") and torch.backends.mps.is_available()):
        raise UsageError("%s: option %s: mps asked, but this torch has no MPS device" % (NAME, k))
    return d


def _dtype(k: str, v: str) -> torch.dtype:
    dtypes = {"float64": torch.float64, "float32": torch.float32}
    if v not in dtypes:
        raise UsageError("%s: option %s: bad value %r (want float64 or float32)" % (NAME, k, v))
    return dtypes[v]


def _positive_int(k, v):
    try:
        n = int(v)
    except ValueError:
        n = 0
    if n < 1:
        raise UsageError("%s: option %s: bad value %r (want a positive integer)" % (NAME, k, v))
    return n


def _float(k, v, positive):
    try:
        f = float(v)
    except ValueError:
        f = math.nan
    if math.isnan(f) or math.isinf(f) or f < 0 or (positive and f == 0):
        want = "a finite number > 0" if positive else "a finite number >= 0"
        raise UsageError("%s: option %s: bad value %r (want %s)" % (NAME, k, v, want))
    return f


def _widths(k, v):
    out = []
    for s in v.split(","):
        try:
            n = int(s.strip())
        except ValueError:
            n = 0
        if n < 1:
            raise UsageError("%s: option %s: bad width %r in %r (want positive integers such as \"100,50\")" % (NAME, k, s, v))
        out.append(n)
    return out


def _file(k, v):
    if v == "":
        raise UsageError("%s: option %s: empty (want a file name)" % (NAME, k))
    path = os.path.abspath(v)
    if not os.path.exists(path):
        raise UsageError("%s: option %s: no such file: %s" % (NAME, k, v))
    if os.path.isdir(path):
        raise UsageError("%s: option %s: %s is a directory, not a file" % (NAME, k, v))
    if not os.path.isfile(path):
        raise UsageError("%s: option %s: %s is not a regular file (a device, a pipe or a socket)" % (NAME, k, v))
    if not os.access(path, os.R_OK):
        raise UsageError("%s: option %s: %s cannot be read (permission denied)" % (NAME, k, v))
    return path


def parse(opts: Dict[str, str]) -> Config:
    """Returns the Config of the options map, taking keys in sorted order so
    that the first error does not depend on the map's order."""
    cfg = Config()
    for k in sorted(opts):
        v = opts[k].strip()
        if k == "hidden":
            if v == "":
                raise UsageError("%s: option hidden: empty (want widths such as \"50\" or \"100,50\")" % NAME)
            cfg.hidden = _widths(k, v)
        elif k in ("epochs", "patience", "batch"):
            setattr(cfg, k, _positive_int(k, v))
        elif k == "tol":
            cfg.tol = _float(k, v, False)
        elif k == "lr":
            cfg.lr = _float(k, v, True)
        elif k == "valid":
            cfg.valid = _float(k, v, False)
            if cfg.valid > 0.5:
                raise UsageError("%s: option valid: %s is above 0.5 (want a share such as 0.15, or 0)" % (NAME, v))
        elif k in ("module", "weights"):
            setattr(cfg, k, _file(k, v))
        elif k == "device":
            if v:
                cfg.device = _device(k, v)
        elif k == "dtype":
            cfg.dtype = _dtype(k, v)
        else:
            raise UsageError('%s: unknown option "%s" (known: %s)' % (NAME, k, ", ".join(n for n, _ in INFO)))
    if cfg.module and "hidden" in opts:
        raise UsageError("%s: options hidden and module exclude each other (hidden sizes the built-in network)" % NAME)
    return cfg
