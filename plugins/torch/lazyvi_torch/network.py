"""Building and training the network: the built-in ReLU MLP or the user's
build() from module=, and minibatch Adam with the Go mlp's stopping rule."""

import importlib.util
import math
import pickle
import threading
import traceback
from typing import TYPE_CHECKING, Callable, List, Optional, Tuple

import grpc
import torch
from torch import nn

from .errors import ModelError, RPCError, UsageError
from .options import NAME

if TYPE_CHECKING:
    from .head import Head
    from .options import Config

# rng_lock guards torch's global generator: build() (PyTorch's default
# initialisation draws from it) and any training of a user's module (its
# dropout, say, draws from it too) run under it, seeded, so that a seed gives
# the same network whatever the concurrency.
rng_lock = threading.Lock()

_user_lock = threading.Lock()
_user_files = {}


class UserFile:
    """A user's network: a module= file's build and, when it defines one,
    fit; or a network in memory (live.py), whose path says so and whose
    state is the state dict a pretrained model loads instead of weights=."""

    def __init__(self, path: str, build: Callable, fit: Optional[Callable], state: Optional[dict] = None) -> None:
        self.path, self.build, self.fit, self.state = path, build, fit, state


def load_user(path: str) -> UserFile:
    """Loads the module= file at path once per process."""
    with _user_lock:
        if path in _user_files:
            return _user_files[path]
        spec = importlib.util.spec_from_file_location("lazyvi_user_module_%d" % len(_user_files), path)
        mod = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(mod)
        except Exception as e:  # the user's code: any error is theirs to fix
            traceback.print_exc()
            raise UsageError("%s: option module: %s does not import: %s%s: %s"
                             % (NAME, path, _where(e, path), type(e).__name__, e))
        build = getattr(mod, "build", None)
        if not callable(build):
            raise UsageError("%s: option module: %s defines no build(n_inputs, n_outputs) function" % (NAME, path))
        fit = getattr(mod, "fit", None)
        if fit is not None and not callable(fit):
            raise UsageError("%s: option module: %s: fit is not a function" % (NAME, path))
        uf = UserFile(path, build, fit)
        _user_files[path] = uf
        return uf


def _where(e: BaseException, path: str) -> str:
    """"line N: " of the deepest frame of e's traceback in the file path
    (a SyntaxError's own line), or "" when none is there."""
    line = getattr(e, "lineno", None) if isinstance(e, SyntaxError) else None
    for fr in traceback.extract_tb(e.__traceback__):
        if fr.filename == path:
            line = fr.lineno
    return "line %d: " % line if line else ""


def build(cfg: "Config", user: Optional[UserFile], inputs: int, outs: int, seed: int) -> nn.Module:
    """A new float64 network with inputs inputs and outs raw outputs,
    initialised from torch's generator seeded with seed: the user's build,
    or nn.Sequential(Linear, ReLU, ..., Linear) with cfg.hidden widths."""
    with rng_lock:
        torch.manual_seed(seed)
        if user is not None:
            try:
                net = user.build(inputs, outs)
            except Exception as e:
                traceback.print_exc()
                raise ModelError("%s: build(%d, %d) in %s: %s: %s" % (NAME, inputs, outs, user.path, type(e).__name__, e))
            if not isinstance(net, nn.Module):
                raise UsageError("%s: build(%d, %d) in %s returned a %s, want a torch.nn.Module"
                                 % (NAME, inputs, outs, user.path, type(net).__name__))
        else:
            layers, width = [], inputs
            for h in cfg.hidden:
                layers += [nn.Linear(width, h), nn.ReLU()]
                width = h
            layers.append(nn.Linear(width, outs))
            net = nn.Sequential(*layers)
    return net.to(torch.float64)


def outputs(net: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, outs: int) -> torch.Tensor:
    """The network's raw outputs on x as an n x outs tensor."""
    z = net(x)
    if not isinstance(z, torch.Tensor):
        raise ModelError("%s: the network returned a %s, want a tensor" % (NAME, type(z).__name__))
    if z.dim() == 1 and outs == 1:
        z = z.unsqueeze(1)
    if tuple(z.shape) != (x.shape[0], outs):
        raise ModelError("%s: the network maps %d rows to outputs of shape %s, want (%d, %d)"
                         % (NAME, x.shape[0], tuple(z.shape), x.shape[0], outs))
    return z


# BLOCK: predictions run the network on blocks of exactly this many rows
# (the last one padded with zeros), so that a row's prediction is the same
# bits whatever else is in the batch: BLAS takes other paths for one row
# (gemv) or a ragged edge than for full tiles, and a user's tanh network
# gave 1-ulp differences between a row alone and in a batch.
BLOCK = 128


def outputs_blocked(net: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, outs: int) -> torch.Tensor:
    """outputs() over fixed-size row blocks."""
    n = x.shape[0]
    if n % BLOCK:
        x = torch.cat([x, x.new_zeros(BLOCK - n % BLOCK, x.shape[1])])
    return torch.cat([outputs(net, x[i:i + BLOCK], outs) for i in range(0, x.shape[0], BLOCK)])[:n]


def refusal(e: pickle.UnpicklingError) -> str:
    """What torch's tensor-only unpickler refused, from its error: its
    message advises weights_only=False, which vi never uses, so vi says
    what the file holds instead."""
    return str(e).rsplit("WeightsUnpickler error:", 1)[-1].strip()


def names_code(e: pickle.UnpicklingError) -> bool:
    """Whether the tensor-only unpickler refused a class or global (a pickle
    that would run code), not bytes that are no pickle at all."""
    return any(w in str(e) for w in ("Unsupported class", "Unsupported global"))


def load_weights(net: nn.Module, path: str) -> nn.Module:
    """Loads the state dict saved at path into net. weights_only: the file is
    unpickled with tensors, containers and numbers only, so that a file
    whose pickle names other objects (a function to call) runs nothing."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
        net.load_state_dict(state)
    except pickle.UnpicklingError as e:
        raise UsageError("%s: option weights: %s: refused: the file holds more than tensors (%s), which could run code when loaded; save the state dict (torch.save(model.state_dict(), FILE))" % (NAME, path, refusal(e)))
    except Exception as e:
        raise UsageError("%s: option weights: %s: %s" % (NAME, path, e))
    return net.to(torch.float64)


def cancelled(alive: Optional[Callable[[], bool]], what: str, count: int, unit: str) -> None:
    """Raises CANCELLED when the call's client has gone (alive() false)."""
    if alive is not None and not alive():
        raise RPCError(grpc.StatusCode.CANCELLED, "%s: %s interrupted after %d %s: context canceled" % (NAME, what, count, unit))


# A warm start's learning-rate schedule, the Go backends' (nn.WarmRate): a
# linear rise to WARM_PEAK times the lr option over the first
# 1/WARM_RISE_DIV of the steps, then a linear fall toward zero.
WARM_PEAK = 4
WARM_RISE_DIV = 4


def warm_rate(t: int, steps: int) -> float:
    """The factor of the lr option at step t (0 <= t < steps) of a warm
    start of steps steps."""
    rise = steps // WARM_RISE_DIV
    if t < rise:
        return WARM_PEAK * (t + 1) / rise
    return WARM_PEAK * (steps - t) / (steps - rise)


# The validation slice's draw: its own generator stream, so that every
# model of a seed (the full one, a retrained one) holds out the same rows;
# no slice under MIN_VALID_ROWS rows (the Go backends' nn.SplitValid).
VALID_STREAM = 0x76616C6964  # "valid"
MIN_VALID_ROWS = 20


def split_valid(n: int, frac: float, seed: int) -> Optional[Tuple[torch.Tensor, torch.Tensor]]:
    """The row indices of the training rows and of the validation slice, each
    in the rows' order: round(frac * n) rows drawn by a generator seeded by
    seed; None when frac is 0, when that is fewer than MIN_VALID_ROWS rows
    or when it would leave fewer training rows than validation rows. The
    slice depends only on n, frac and seed."""
    nv = int(math.floor(frac * n + 0.5))
    if nv < MIN_VALID_ROWS or n - nv < nv:
        return None
    g = torch.Generator()
    g.manual_seed((seed ^ VALID_STREAM) & 0xFFFFFFFFFFFFFFFF)
    perm = torch.randperm(n, generator=g)
    return torch.sort(perm[nv:]).values, torch.sort(perm[:nv]).values


class Trainer:
    """Minibatch Adam (PyTorch's, betas 0.9/0.999, eps 1e-8, no weight decay)
    on the rows of x with targets t; rows reshuffled by gen at the start of
    every pass, as the Go nn.Trainer does. valid, when given, is the
    validation slice (its rows and targets) that fit's early stopping
    watches instead of the training loss."""

    def __init__(self, net: nn.Module, head: "Head", x: torch.Tensor, t: torch.Tensor, batch: int, lr: float,
                 gen: torch.Generator, valid: Optional[Tuple[torch.Tensor, torch.Tensor]] = None) -> None:
        self.net, self.head, self.x, self.t, self.gen, self.valid = net, head, x, t, gen, valid
        self.n = x.shape[0]
        self.batch = min(batch, self.n)
        self.opt = torch.optim.Adam([p for p in net.parameters() if p.requires_grad], lr=lr,
                                    betas=(0.9, 0.999), eps=1e-8)
        self.perm, self.pos = None, 0
        self.stopped_by = ""  # what ended fit: "patience", "cap" or "nan"
        self.best_loss = math.nan  # the watched loss at the kept parameters

    def epoch_steps(self) -> int:
        return (self.n + self.batch - 1) // self.batch

    def run(self, k: int) -> None:
        """Takes k Adam steps."""
        self.net.train()
        for _ in range(k):
            if self.pos == 0:
                self.perm = torch.randperm(self.n, generator=self.gen)
            idx = self.perm[self.pos:self.pos + self.batch]
            self.pos += len(idx)
            if self.pos >= self.n:
                self.pos = 0
            self.opt.zero_grad(set_to_none=True)
            loss = self.head.loss(outputs(self.net, self.x[idx], self.head.outs), self.t[idx])
            loss.backward()
            self.opt.step()
        self.net.eval()

    def full_loss(self) -> float:
        """The watched loss: on the validation slice, or on every training
        row without one."""
        x, t = self.valid if self.valid is not None else (self.x, self.t)
        self.net.eval()
        with torch.no_grad():
            return float(self.head.loss(outputs(self.net, x, self.head.outs), t))

    def fit(self, cfg: "Config", alive: Optional[Callable[[], bool]]) -> List[float]:
        """At most cfg.epochs epochs; stops when the watched loss (the
        validation slice's, or the full training loss) has not fallen below
        (1 - tol) times the best so far for patience epochs in a row, or is
        NaN; leaves the network at the parameters of the epoch with the
        lowest loss (or the initial ones). Returns the losses after every
        epoch."""
        params = [p for p in self.net.parameters()]
        best = [p.detach().clone() for p in params]
        best_loss = self.full_loss()
        stale, losses = 0, []
        self.stopped_by = "cap"
        for epoch in range(cfg.epochs):
            cancelled(alive, "Fit", epoch, "epochs")
            self.run(self.epoch_steps())
            loss = self.full_loss()
            losses.append(loss)
            if math.isnan(loss):
                self.stopped_by = "nan"
                break
            if loss < best_loss * (1 - cfg.tol):
                stale = 0
            else:
                stale += 1
            if loss < best_loss:
                best_loss = loss
                best = [p.detach().clone() for p in params]
            if stale >= cfg.patience:
                self.stopped_by = "patience"
                break
        with torch.no_grad():
            for p, b in zip(params, best):
                p.copy_(b)
        self.best_loss = best_loss
        return losses

    def continue_(self, steps: int, alive: Optional[Callable[[], bool]]) -> None:
        """steps Adam steps (<= 0: one epoch), for WarmStart, at warm_rate
        times the learning rate (the Go nn.Trainer.Continue's schedule)."""
        if steps <= 0:
            steps = self.epoch_steps()
        groups = self.opt.param_groups
        lr = [g["lr"] for g in groups]
        for t in range(steps):
            cancelled(alive, "WarmStart", t, "steps")
            for g, r in zip(groups, lr):
                g["lr"] = r * warm_rate(t, steps)
            self.run(1)
        for g, r in zip(groups, lr):
            g["lr"] = r
