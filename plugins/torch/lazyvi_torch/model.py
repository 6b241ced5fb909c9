"""A model: one network with its head, fitted once, then read-only.

Gradients are those of the prediction (after the link) with respect to the
network's parameters, flattened in named_parameters() order, each
row-major: for the built-in network W1 (out x in), b1, W2, b2, ..., the Go
mlp's layout. The per-sample Jacobian comes from functorch (vmap of jacrev
over the rows, in blocks of bounded memory); J^T a is one backward pass;
the kernel and the Gram matrix are products of Jacobian blocks. The
built-in network's Jacobian products and kernels come from its layers'
signals (signals.py), kept per input between products. Any other
network's products batch their vectors: Phi V is functorch's jvp under
vmap over a block of V's columns, Phi^T U one vjp whose pullback runs
under vmap over a block of U's columns.

The network lives on the device of the device= option in the dtype of
dtype=; every input arrives as a float64 CPU tensor and every answer leaves
as one. Where lazyvi asks for single precision (its Krylov solves' products
and residuals, and its penalty search's kernels at scale), a float64 model
serves the call from a float32 copy of its network, made on first use
(_precision).

A fitted model may be called from many threads at once: every call borrows
its own functional copy of the network (functorch's functional modules swap
parameters in and out of a module, which one thread at a time may do).
"""

import contextlib
import copy
import io
import pickle
import sys
import threading
from typing import List, Optional, Tuple

import torch

import lazyvi_plugin
from lazyvi_plugin import FitReport as Report

from . import network, options, signals
from .errors import ModelError, UsageError
from .head import MULTICLASS, Head
from .options import NAME

# transform_lock serialises functorch's transforms: in torch 1.13 their
# interpreter stack is shared by all threads, and two concurrent vmaps fail
# an internal assertion (DynamicLayer.cpp: data.find(layerId) == data.end()).
transform_lock = threading.Lock()

# JACOBIAN_BYTES bounds one block of Jacobian rows (and vmap's intermediates,
# a few times that).
JACOBIAN_BYTES = 64 << 20

# PROBE_ROWS: _row_bytes measures a forward pass on this many rows and on
# twice as many.
PROBE_ROWS = 8

# The shuffles' generator: the seed, or for warm starts the seed with the Go
# backends' "warm" stream mixed in.
_WARM = 0x7761726D


def _functorch():
    """The function transforms (vmap, jacrev, jvp, vjp): torch.func from
    torch 2.0 on, else functorch, imported on first use (functorch pulls in
    sympy, a second of the plugin's start-up that lazyvi waits for)."""
    try:
        import torch.func as tf
        return tf
    except ImportError:
        import functorch
        return functorch


def _make_functional(net: torch.nn.Module):
    """f(params, buffers, x), the network as a function of its parameters
    and buffers (named_parameters' and named_buffers' order), and those
    parameters and buffers. f runs on a copy of net of its own: one thread
    at a time may call it."""
    try:
        from torch.func import functional_call
    except ImportError:
        import functorch
        return functorch.make_functional_with_buffers(net)
    own = copy.deepcopy(net)
    pnames = [n for n, _ in own.named_parameters()]
    bnames = [n for n, _ in own.named_buffers()]

    def f(params, buffers, x):
        return functional_call(own, (dict(zip(pnames, params)), dict(zip(bnames, buffers))), (x,))

    return f, tuple(p for _, p in net.named_parameters()), tuple(b for _, b in net.named_buffers())


def _generator(seed):
    g = torch.Generator()
    g.manual_seed(seed)
    return g


# STATE_VERSION tags save_state's encoding.
STATE_VERSION = 1


def describe(net: torch.nn.Module) -> str:
    """The network in a few words: its leaf modules and its parameter
    count ("Linear(in_features=4, out_features=50, bias=True), ReLU(),
    ...; 301 parameters"), at most 300 characters."""
    leaves = [m for m in net.modules() if not list(m.children())] or [net]
    parts = ["%s(%s)" % (type(m).__name__, m.extra_repr()) for m in leaves]
    count = sum(p.numel() for p in net.parameters())
    text = ", ".join(parts)
    if len(text) > 260:
        text = text[:257] + "..."
    return "%s; %d parameters" % (text, count)


class Model(lazyvi_plugin.Model):
    def __init__(self, spec_task: int, inputs: int, seed: int, classes: int, cfg: "options.Config",
                 user: Optional["network.UserFile"], pretrained: bool = False) -> None:
        self.head = Head(spec_task, inputs, classes)
        self.inputs, self.seed, self.cfg, self.user = inputs, seed, cfg, user
        self.pretrained = pretrained
        self.device, self.dtype = cfg.device, cfg.dtype
        self.fitted = False
        self.losses: List[float] = []
        self.report = Report()
        self.num_params = 0
        self._fit_lock = threading.Lock()

    def _on(self, t: torch.Tensor) -> torch.Tensor:
        """t on the model's device, in its dtype."""
        return t.to(self.device, self.dtype)

    def _targets(self, y: torch.Tensor) -> torch.Tensor:
        """The training targets of y (head.targets) on the device: labels
        as integers, the rest in the model's dtype."""
        t = self.head.targets(y)
        return t.to(self.device) if t.dtype == torch.long else self._on(t)

    @staticmethod
    def _out(t: torch.Tensor) -> torch.Tensor:
        """An answer as lazyvi reads it: float64 on the CPU."""
        return t.detach().to("cpu", torch.float64)

    # --- fitting -------------------------------------------------------

    def _input(self, x):
        if x.dim() != 2 or x.shape[1] != self.inputs:
            raise ModelError("%s: input has %d columns, model expects %d" % (NAME, x.shape[1] if x.dim() == 2 else 0, self.inputs))
        if x.shape[0] == 0:
            raise ModelError("%s: input has no rows" % NAME)
        return x

    def ready(self) -> None:
        if not self.fitted:
            raise ModelError("%s: model is not fitted" % NAME)

    def fit(self, x: torch.Tensor, y: torch.Tensor, alive=None) -> None:
        """Trains the network on x, y; a pretrained model loads the weights=
        state dict instead (and only checks the data)."""
        with self._fit_lock:
            if self.fitted:
                raise ModelError("%s: Fit called twice" % NAME)
            self._input(x)
            if len(y) != x.shape[0]:
                raise ModelError("%s: Fit: %d rows but %d responses" % (NAME, x.shape[0], len(y)))
            net = network.build(self.cfg, self.user, self.inputs, self.head.outs, self.seed)
            if self.pretrained:
                # The user's trained network: loaded, not trained. It
                # predicts the response itself (no standardisation).
                self.head.targets(y)
                if self.user is not None and self.user.state is not None:
                    net.load_state_dict(self.user.state)
                else:
                    network.load_weights(net, self.cfg.weights)
                self.report = Report(loaded=True)
            elif self.user is not None and self.user.fit is not None:
                self.head.targets(y)
                with network.rng_lock:
                    torch.manual_seed(self.seed)
                    try:
                        self.user.fit(net, x, y.clone(), self.head.task_name)
                    except Exception as e:
                        raise ModelError("%s: fit in %s: %s: %s" % (NAME, self.user.path, type(e).__name__, e)) from e
            else:
                self.head.standardize(y)
                net = net.to(self.device, self.dtype)
                t, xd = self._targets(y), self._on(x)
                # The validation slice early stopping watches, as the Go
                # mlp's: the same rows for every model of this seed.
                split, valid = network.split_valid(xd.shape[0], self.cfg.valid, self.seed), None
                if split is not None:
                    rows, held = split
                    xd, t, valid = xd[rows.to(xd.device)], t[rows.to(t.device)], (xd[held.to(xd.device)], t[held.to(t.device)])
                tr = network.Trainer(net, self.head, xd, t, self.cfg.batch, self.cfg.lr, _generator(self.seed), valid)
                with self._user_rng(self.seed):
                    self.losses = tr.fit(self.cfg, alive)
                self.report = Report(epochs=len(self.losses), stopped_by=tr.stopped_by)
                if split is not None:
                    self.report.valid_rows, self.report.valid_loss = len(split[1]), tr.best_loss
            self._finish(net)

    def save_state(self) -> bytes:
        """The fitted model's state: its parameters and buffers, the head's
        scaling and the report, for load_state."""
        self.ready()
        buf = io.BytesIO()
        # Floats and booleans as tensors and ints: torch 1.13's weights-only
        # unpickler (load_state's) reads tensors, ints and strings only.
        torch.save({"version": STATE_VERSION, "task": self.head.task, "inputs": self.inputs, "outs": self.head.outs,
                    "scale": torch.tensor([self.head.mu, self.head.sd], dtype=torch.float64),
                    "epochs": self.report.epochs, "stopped_by": self.report.stopped_by, "loaded": int(self.report.loaded),
                    "valid_rows": self.report.valid_rows,
                    "valid_loss": torch.tensor(self.report.valid_loss, dtype=torch.float64),
                    "state_dict": {k: v.detach().to("cpu", torch.float64) for k, v in self.net.state_dict().items()}}, buf)
        return buf.getvalue()

    def load_state(self, state: bytes) -> None:
        """Makes this unfitted model the one whose save_state gave state;
        UsageError when it is not such a state or another model's."""
        with self._fit_lock:
            if self.fitted:
                raise ModelError("%s: Load into a fitted model" % NAME)
            try:
                st = torch.load(io.BytesIO(state), map_location="cpu", weights_only=True)
            except pickle.UnpicklingError as e:
                if not network.names_code(e):
                    raise UsageError("%s: Load: not a saved model state: %s" % (NAME, e))
                raise UsageError("%s: Load: refused: the saved state holds more than tensors (%s), which could run code when loaded" % (NAME, network.refusal(e)))
            except Exception as e:
                raise UsageError("%s: Load: not a saved model state: %s" % (NAME, e))
            if not isinstance(st, dict) or st.get("version") != STATE_VERSION:
                raise UsageError("%s: Load: not a model state of this plugin (version %r, want %d)"
                                 % (NAME, st.get("version") if isinstance(st, dict) else None, STATE_VERSION))
            want = (self.head.task, self.inputs, self.head.outs)
            got = (st.get("task"), st.get("inputs"), st.get("outs"))
            if got != want:
                raise UsageError("%s: Load: the state is of a model with task, inputs, outputs %s, this one %s" % (NAME, got, want))
            net = network.build(self.cfg, self.user, self.inputs, self.head.outs, self.seed)
            try:
                net.load_state_dict(st["state_dict"])
            except Exception as e:
                raise UsageError("%s: Load: the state does not fit this network: %s" % (NAME, e))
            self.head.mu, self.head.sd = float(st["scale"][0]), float(st["scale"][1])
            self.report = Report(epochs=int(st["epochs"]), stopped_by=str(st["stopped_by"]), loaded=bool(st["loaded"]),
                                 valid_rows=int(st.get("valid_rows", 0)),
                                 valid_loss=float(st.get("valid_loss", torch.tensor(0.0))))
            self._finish(net)

    @contextlib.contextmanager
    def _user_rng(self, seed):
        """A user's network may draw from torch's generator while it trains
        (dropout): then training holds it, seeded."""
        if self.user is None:
            yield
            return
        with network.rng_lock:
            torch.manual_seed(seed)
            yield

    def _finish(self, net: torch.nn.Module) -> None:
        net = net.to(self.device, self.dtype)
        net.eval()
        self.net = net
        self.report.architecture = describe(net)
        f, params, buffers = _make_functional(net)
        self.params = tuple(p.detach() for p in params)
        self.buffers = tuple(b.detach() for b in buffers)
        self.sizes = [p.numel() for p in self.params]
        self.num_params = sum(self.sizes)
        self._free = [f]
        self._pool_lock = threading.Lock()
        self._single_ok = True  # _precision may make a float32 copy
        self._bytes_per_row = None  # _row_bytes's measure
        self._forward_ad = True  # functorch.jvp works on this network
        self._reverse_ad = True  # functorch.vjp works on it
        self._double_backward = True  # its backward pass is differentiable
        self._single: Optional["Model"] = None  # _precision's float32 copy
        # The built-in network's products come from its layers' signals
        # (signals.py); any other network's from functorch.
        self._layout = signals.layout(net) if self.user is None and _plain_mlp(net) else None
        self.fitted = True

    def _precision(self, single: bool) -> "Model":
        """The model a call computes on: with single on a float64 model, a
        float32 copy of it (its network, parameters and floating buffers
        rounded; the head and the rest shared, read-only), made once; else
        the model itself. A network that cannot run in float32 (a user's
        module that makes float64 tensors of its own) is served in float64,
        which meets single precision's bound too."""
        if not single or self.dtype != torch.float64 or not self._single_ok:
            return self
        with self._pool_lock:
            if self._single is None:
                v = copy.copy(self)
                v.dtype = torch.float32
                v.net = copy.deepcopy(self.net).to(torch.float32)
                v.params = tuple(p.to(torch.float32) for p in self.params)
                v.buffers = tuple(b.to(torch.float32) if b.is_floating_point() else b for b in self.buffers)
                v._free, v._pool_lock, v._bytes_per_row, v._single = [], threading.Lock(), None, None
                self._single = v
            return self._single

    def _single_call(self, single: bool, call):
        """call(m) on _precision(single); where the float32 copy fails (a
        network with float64 constants of its own), call(self), and every
        later call in float64, with a warning once."""
        self.ready()
        m = self._precision(single)
        if m is self:
            return call(self)
        try:
            return call(m)
        except ModelError:
            raise
        except RuntimeError as e:
            _warn_once("single", "%s: this network does not run in float32 (%s); single-precision products in float64" % (NAME, e))
            self._single_ok = False
            return call(self)

    @contextlib.contextmanager
    def _functional(self):
        with self._pool_lock:
            f = self._free.pop() if self._free else None
        if f is None:
            f = _make_functional(self.net)[0]
        try:
            yield f
        finally:
            with self._pool_lock:
                self._free.append(f)

    def warm_start(self, x: torch.Tensor, y: torch.Tensor, steps: int, seed: int, alive=None) -> "Model":
        """A new model from this one's parameters (and head), trained steps
        Adam steps (<= 0: one epoch) on x, y, rows shuffled by seed."""
        self.ready()
        self._input(x)
        if len(y) != x.shape[0]:
            raise ModelError("%s: WarmStart: %d rows but %d responses" % (NAME, x.shape[0], len(y)))
        t = self._targets(y)
        nm = Model(self.head.task, self.inputs, self.seed, self.head.outs if self.head.task == 2 else 0, self.cfg, self.user)
        nm.head = copy.copy(self.head)
        net = copy.deepcopy(self.net)  # self.net is never changed after _finish
        tr = network.Trainer(net, nm.head, self._on(x), t, self.cfg.batch, self.cfg.lr, _generator(seed ^ _WARM))
        with self._user_rng(seed ^ _WARM):
            tr.continue_(steps, alive)
        nm._finish(net)
        nm.report = Report(epochs=self.report.epochs, stopped_by="warm start", loaded=self.report.loaded,
                           architecture=nm.report.architecture)
        return nm

    # --- predictions ---------------------------------------------------
    #
    # The public methods take and return float64 CPU tensors; the ones
    # with a leading underscore work on the device, in the model's dtype.

    def _shifted(self, dtheta: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        if dtheta.numel() != self.num_params:
            raise ModelError("%s: PredictShifted: len(dtheta) = %d, want NumParams() = %d" % (NAME, dtheta.numel(), self.num_params))
        return tuple(p + d.view_as(p) for p, d in zip(self.params, torch.split(dtheta, self.sizes)))

    def _predict(self, f, params, x):
        return self.head.link(network.outputs_blocked(lambda xx: f(params, self.buffers, xx), x, self.head.outs))

    def predict(self, x: torch.Tensor, single: bool = False) -> torch.Tensor:
        """Predictions on x: n x 1, or n x K class probabilities (single: in
        float32, see _precision)."""
        if single:
            return self._single_call(True, lambda m: m._predict_prepared(x))
        self.ready()
        self._input(x)
        with torch.no_grad(), self._functional() as f:
            return self._out(self._predict(f, self.params, self._on(x)))

    def _predict_prepared(self, x: torch.Tensor) -> torch.Tensor:
        """predict, for the built-in network from the layers' pass that its
        products on x then use (signals.CACHE)."""
        sig = self._signals(x, self._on(self._input(x))) if self._layout is not None else None
        if sig is None:
            return self.predict(x)
        return self._out(sig.pred)

    def predict_shifted(self, x: torch.Tensor, dtheta: torch.Tensor) -> torch.Tensor:
        """Predictions on x at the parameters theta + dtheta."""
        self.ready()
        self._input(x)
        with torch.no_grad(), self._functional() as f:
            return self._out(self._predict(f, self._shifted(self._on(dtheta)), self._on(x)))

    # --- gradients -----------------------------------------------------

    def _jacobian_blocks(self, x):
        """Yields (first row, block of Jacobian rows) over x (on the device)
        in row blocks: rows i*R + k are the gradients of output k of sample
        i."""
        R, M = self.head.rows_per_sample(), self.num_params
        rows = max(1, JACOBIAN_BYTES // (8 * R * max(M, 1) * 4))
        n = x.shape[0]
        with self._functional() as f:
            def single(params, buffers, xi):
                z = network.outputs(lambda xx: f(params, buffers, xx), xi.unsqueeze(0), self.head.outs)
                p = self.head.link(z)[0]
                return p if self.head.task == MULTICLASS else p[0]

            ft = _functorch()
            # One output a sample: its gradient (grad), a third cheaper
            # than jacrev's Jacobian of a one-element output.
            per_sample = ft.vmap(ft.jacrev(single) if R > 1 else ft.grad(single), in_dims=(None, None, 0))
            for i in range(0, n, rows):
                xb = x[i:i + rows]
                try:
                    with transform_lock:
                        grads = per_sample(self.params, self.buffers, xb)
                except RuntimeError as e:
                    _warn_once("vmap", "%s: functorch.vmap cannot batch this network (%s); gradients one sample at a time" % (NAME, e))
                    grads = self._jacobian_rows_slow(f, xb)
                b = xb.shape[0]
                yield i * R, torch.cat([g.reshape(b * R, -1) for g in grads], dim=1)

    def _jacobian_rows_slow(self, f, xb):
        """The fallback for networks vmap cannot batch: one reverse pass per
        row and output."""
        out = [[] for _ in self.params]
        for xi in xb:
            ps = tuple(p.detach().requires_grad_() for p in self.params)
            with torch.enable_grad():
                p = self.head.link(network.outputs(lambda xx: f(ps, self.buffers, xx), xi.unsqueeze(0), self.head.outs))[0]
                for k in range(self.head.rows_per_sample()):
                    gs = torch.autograd.grad(p[k], ps, retain_graph=True, allow_unused=True)
                    for j, (g, q) in enumerate(zip(gs, ps)):
                        out[j].append(torch.zeros_like(q) if g is None else g)
        R = self.head.rows_per_sample()
        return [torch.stack(o).reshape(xb.shape[0], R, *q.shape) for o, q in zip(out, self.params)]

    def _jacobian(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([j for _, j in self._jacobian_blocks(x)], dim=0)

    def jacobian(self, x: torch.Tensor) -> torch.Tensor:
        """The Jacobian of the predictions on x with respect to the
        parameters: (n R) x M."""
        self.ready()
        self._input(x)
        return self._out(self._jacobian(self._on(x)))

    def _jacobian_tvec(self, x: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        with self._functional() as f, torch.enable_grad():
            ps = tuple(p.detach().requires_grad_() for p in self.params)
            pred = self._pred_flat(f, ps, x)
            gs = torch.autograd.grad(pred, ps, grad_outputs=a.reshape(-1), allow_unused=True)
        return torch.cat([(torch.zeros_like(p) if g is None else g).reshape(-1) for g, p in zip(gs, ps)])

    def jacobian_tvec(self, x: torch.Tensor, a: torch.Tensor, single: bool = False) -> torch.Tensor:
        """J(x)^T a: from the layers' signals for the built-in network, else
        by one backward pass (single: in float32, see _precision)."""
        if single:
            return self._single_call(True, lambda m: m.jacobian_tvec(x, a))
        self.ready()
        self._input(x)
        n = x.shape[0] * self.head.rows_per_sample()
        if a.numel() != n:
            raise ModelError("%s: JacobianTVec: len(a) = %d, want %d" % (NAME, a.numel(), n))
        sig = self._signals(x, self._on(x)) if self._layout is not None else None
        if sig is not None:
            return self._out(signals.tmul(sig, self._layout, self._on(a).reshape(1, -1), self.head.rows_per_sample(), self.num_params)[:, 0])
        return self._out(self._jacobian_tvec(self._on(x), self._on(a)))

    # --- matrix-free products ------------------------------------------

    def _product_args(self, op, x, v, want):
        """Checks a product's arguments (v's rows: want, or the Jacobian's
        rows when want is None) and returns the Jacobian's rows."""
        self.ready()
        self._input(x)
        n = x.shape[0] * self.head.rows_per_sample()
        if want is None:
            want = n
        if v.dim() != 2 or v.shape[0] != want or v.shape[1] < 1:
            # An empty matrix is 0 x 0, as the Go server unpacks it.
            r, c = (v.shape[0], v.shape[1]) if v.dim() == 2 and v.numel() else (0, 0)
            raise ModelError("%s: %s: %d x %d vectors, want %d rows" % (NAME, op, r, c, want))
        return n

    def _pred_flat(self, f, params, x):
        """The predictions on x at params, stacked as the Jacobian's rows."""
        return self.head.link(network.outputs(lambda xx: f(params, self.buffers, xx), x, self.head.outs)).reshape(-1)

    def _row_bytes(self, f):
        """The bytes a forward pass keeps per row (for the backward pass, or
        as the forward-mode pass's tangents), measured once: the saved
        tensors of a pass on PROBE_ROWS rows and on twice as many, whose
        difference leaves out what does not grow with the rows (the
        parameters themselves)."""
        with self._pool_lock:
            if self._bytes_per_row is not None:
                return self._bytes_per_row
        sizes = []
        with self._functional() as g:
            for rows in (PROBE_ROWS, 2 * PROBE_ROWS):
                total = [0]

                def pack(t):
                    total[0] += t.numel() * t.element_size()
                    return t

                ps = tuple(p.detach().requires_grad_() for p in self.params)
                with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                    self._pred_flat(g, ps, torch.zeros(rows, self.inputs, dtype=self.dtype, device=self.device))
                sizes.append(total[0])
        per_row = max(8 * self.head.outs, (sizes[1] - sizes[0]) // PROBE_ROWS)
        with self._pool_lock:
            self._bytes_per_row = per_row
        return per_row

    def _product_blocks(self, n: int, p: int) -> Tuple[int, int]:
        """Rows of x and vectors per block of a product: a block's forward
        pass for every vector of the block (its tangents or saved tensors,
        about as much again) within JACOBIAN_BYTES."""
        per_row = 2 * self._row_bytes(None)
        rows = max(1, min(n, JACOBIAN_BYTES // per_row))
        cols = max(1, min(p, JACOBIAN_BYTES // (per_row * rows)))
        return rows, cols

    def _product_rows(self, f, n):
        return self._product_blocks(n, 1)[0]

    def _tangents(self, cols: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        """The parameter-shaped tangents of the rows of cols (b x M): one
        tensor per parameter with a leading dimension b."""
        return tuple(t.reshape(cols.shape[0], *p.shape) for p, t in zip(self.params, torch.split(cols, self.sizes, dim=1)))

    def jacobian_mul(self, x: torch.Tensor, v: torch.Tensor, single: bool = False) -> torch.Tensor:
        """Phi(x) V for V of M x p, (n R) x p: from the layers' signals for
        the built-in network, else functorch.jvp under vmap over blocks of
        V's columns, per block of rows; never the Jacobian (single: in
        float32, see _precision)."""
        if single:
            return self._single_call(True, lambda m: m.jacobian_mul(x, v))
        nr = self._product_args("JacobianMul", x, v, self.num_params)
        key, x, v = x, self._on(x), self._on(v)
        R, p = self.head.rows_per_sample(), v.shape[1]
        cols = v.T.contiguous()  # column c of V as a contiguous row
        sig = self._signals(key, x) if self._layout is not None else None
        if sig is not None:
            return self._out(signals.mul(sig, self._layout, cols, R))
        out = torch.empty(nr, p, dtype=self.dtype, device=self.device)
        rows, width = self._product_blocks(x.shape[0], p)
        with self._functional() as f:
            for i in range(0, x.shape[0], rows):
                xb = x[i:i + rows]
                for c in range(0, p, width):
                    out[i * R:(i + xb.shape[0]) * R, c:c + width] = self._jvp_block(f, xb, cols[c:c + width])
        return self._out(out)

    def _jvp_block(self, f, xb, cols):
        """Phi(xb) V, (b R) x p, V's columns the rows of cols."""
        if self._forward_ad:
            ft = _functorch()
            try:
                with transform_lock:
                    jvp = lambda *t: ft.jvp(lambda ps: self._pred_flat(f, ps, xb), (self.params,), (t,))[1]  # noqa: E731
                    return ft.vmap(jvp)(*self._tangents(cols)).T
            except RuntimeError as e:
                _warn_once("jvp", "%s: functorch.jvp cannot differentiate this network forward (%s); "
                                  "Jacobian products by double backward passes" % (NAME, e))
                self._forward_ad = False
        if not self._double_backward:
            return self._jacobian_products(xb, cols)
        # Phi v = d/du (Phi^T u . v): the backward pass's graph, built with
        # create_graph, is linear in u; one more backward pass per column.
        with torch.enable_grad():
            ps = tuple(p.detach().requires_grad_() for p in self.params)
            pred = self._pred_flat(f, ps, xb)
            u = torch.zeros_like(pred, requires_grad=True)
            gs = torch.autograd.grad(pred, ps, grad_outputs=u, create_graph=True, allow_unused=True)
            # A used parameter's gradient Phi^T u is linear in u, so its
            # graph reaches u, unless a backward on the way was computed
            # off the graph (an autograd.Function whose backward detaches,
            # or leaves torch): then d/du would drop that part of Phi v
            # without an error. Such a network gets the products from its
            # Jacobian, formed a bounded block at a time.
            if any(g is not None and not g.requires_grad for g in gs):
                _warn_once("double_backward", "%s: this network's backward pass cannot be differentiated again; "
                                              "Jacobian products from Jacobian blocks" % NAME)
                self._double_backward = False
                return self._jacobian_products(xb, cols)
            out = torch.zeros(pred.shape[0], cols.shape[0], dtype=self.dtype, device=self.device)
            for c, ts in enumerate(zip(*self._tangents(cols))):
                s = sum((g * t).sum() for g, t in zip(gs, ts) if g is not None)
                if torch.is_tensor(s) and s.requires_grad:
                    out[:, c] = torch.autograd.grad(s, u, retain_graph=True)[0]
        return out

    def _jacobian_products(self, xb, cols):
        """Phi(xb) V from the Jacobian of xb, in _jacobian_blocks's blocks
        of bounded memory: the fallback for a network neither functorch.jvp
        nor double backward passes can differentiate."""
        out = torch.empty(xb.shape[0] * self.head.rows_per_sample(), cols.shape[0], dtype=self.dtype, device=self.device)
        for i, jb in self._jacobian_blocks(xb):
            out[i:i + jb.shape[0]] = jb @ cols.T
        return out

    def jacobian_tmul(self, x: torch.Tensor, u: torch.Tensor, single: bool = False) -> torch.Tensor:
        """Phi(x)^T U for U of (n R) x p, M x p: from the layers' signals
        for the built-in network, else per block of rows one forward pass
        and functorch.vjp's pullback under vmap over blocks of U's columns;
        never the Jacobian (single: in float32, see _precision)."""
        if single:
            return self._single_call(True, lambda m: m.jacobian_tmul(x, u))
        self._product_args("JacobianTMul", x, u, None)
        key, x, u = x, self._on(x), self._on(u)
        R, p = self.head.rows_per_sample(), u.shape[1]
        sig = self._signals(key, x) if self._layout is not None else None
        if sig is not None:
            return self._out(signals.tmul(sig, self._layout, u.T.contiguous(), R, self.num_params))
        out = torch.zeros(self.num_params, p, dtype=self.dtype, device=self.device)
        rows, width = self._product_blocks(x.shape[0], p)
        with self._functional() as f:
            for i in range(0, x.shape[0], rows):
                xb = x[i:i + rows]
                ub = u[i * R:(i + xb.shape[0]) * R].T.contiguous()
                for c in range(0, p, width):
                    out[:, c:c + width] += self._vjp_block(f, xb, ub[c:c + width])
        return self._out(out)

    def _vjp_block(self, f, xb, rows):
        """Phi(xb)^T U, M x p, U's columns the rows of rows: one forward
        pass and its pullback under vmap, or one backward pass per column
        for a network functorch cannot transform."""
        if self._reverse_ad:
            ft = _functorch()
            try:
                with transform_lock:
                    _, pull = ft.vjp(lambda ps: self._pred_flat(f, ps, xb), self.params)
                    gs = ft.vmap(pull)(rows)[0]
                return torch.cat([g.reshape(g.shape[0], -1) for g in gs], dim=1).T
            except RuntimeError as e:
                _warn_once("vjp", "%s: functorch.vjp cannot differentiate this network (%s); "
                                  "one backward pass per vector" % (NAME, e))
                self._reverse_ad = False
        out = torch.empty(self.num_params, rows.shape[0], dtype=self.dtype, device=self.device)
        with torch.enable_grad():
            ps = tuple(q.detach().requires_grad_() for q in self.params)
            pred = self._pred_flat(f, ps, xb)
            for c in range(rows.shape[0]):
                gs = torch.autograd.grad(pred, ps, grad_outputs=rows[c], retain_graph=c < rows.shape[0] - 1,
                                         allow_unused=True)
                out[:, c] = torch.cat([(torch.zeros_like(q) if g is None else g).reshape(-1) for g, q in zip(gs, ps)])
        return out

    def kernel(self, x1: torch.Tensor, x2: Optional[torch.Tensor], single: bool = False) -> torch.Tensor:
        """J(x1) J(x2)^T; x2 None: J(x1) J(x1)^T, exactly symmetric (single:
        in float32, see _precision)."""
        if single:
            return self._single_call(True, lambda m: m.kernel(x1, x2))
        self.ready()
        x1 = self._on(self._input(x1))
        x2 = None if x2 is None else self._on(self._input(x2))
        k = self._layer_kernel(x1, x2)
        if k is not None:
            return self._out(k)
        j1 = self._jacobian(x1)
        if x2 is None:
            k = j1 @ j1.T
            return self._out((k + k.T) / 2)
        out = torch.empty(j1.shape[0], x2.shape[0] * self.head.rows_per_sample(), dtype=self.dtype, device=self.device)
        for i, j2 in self._jacobian_blocks(x2):
            out[:, i:i + j2.shape[0]] = j1 @ j2.T
        return self._out(out)

    def _layer_kernel(self, x1: torch.Tensor, x2: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
        """J(x1) J(x2)^T of the built-in network (Linear and ReLU layers)
        from each Linear layer's inputs A and the gradients D of the
        predictions with respect to its outputs: entry (i R + k, j R + m)
        is the sum over the layers of (A1_i . A2_j + 1) (D1_ik . D2_jm),
        the weights' part and the bias's (R outputs a sample: K for
        multiclass, else 1). It costs rows^2 R^2 times the widths, where
        the Jacobian's product costs rows^2 R^2 times the parameters, and
        the Jacobian (rows R x parameters) is never formed. None for any
        other network: the Jacobian serves it."""
        if self._layout is None:
            return None
        R = self.head.rows_per_sample()
        s1 = self._layer_signals(x1).layers
        s2 = s1 if x2 is None else self._layer_signals(x2).layers
        k = None
        for (a1, d1, bias), (a2, d2, _) in zip(s1, s2):
            aa = a1 @ a2.T + (1.0 if bias else 0.0)
            if R > 1:
                aa = aa.repeat_interleave(R, dim=0).repeat_interleave(R, dim=1)
            t = aa * (d1 @ d2.T)
            k = t if k is None else k + t
        if x2 is None:
            k = (k + k.T) / 2
        return k

    def _signals(self, key: torch.Tensor, x: torch.Tensor) -> Optional["signals.Signals"]:
        """The layers' signals on x (key: the caller's tensor, x that on
        the device in the model's dtype), kept for the next products on
        the same tensor (signals.CACHE); None where they would exceed the
        cache's budget (the caller computes without them)."""
        R = self.head.rows_per_sample()
        size = signals.size(x.shape[0], R, self._layout, self.head.outs, x.element_size())
        return signals.CACHE.get(self, key, size, lambda: self._layer_signals(x))

    def _layer_signals(self, x: torch.Tensor) -> "signals.Signals":
        """The layers' signals on x (_layer_signals_block's): written in
        place for one output a sample of the built-in network
        (_layer_signals_direct), else _layer_signals_block over blocks of
        signals.BLOCK_ROWS rows, so that a pass's temporaries stay a
        block's."""
        n, B, R = x.shape[0], signals.BLOCK_ROWS, self.head.rows_per_sample()
        if R == 1 and _alternating(self.net):
            return self._layer_signals_direct(x)
        if n <= B:
            return self._layer_signals_block(x)
        out: Optional["signals.Signals"] = None
        for s in range(0, n, B):
            e = min(n, s + B)
            blk = self._layer_signals_block(x[s:e])
            if out is None:
                out = signals.Signals([(a.new_empty(n, a.shape[1]), d.new_empty(n * R, d.shape[1]), b) for a, d, b in blk.layers],
                                      blk.pred.new_empty(n, blk.pred.shape[1]))
            for (A, D, _), (a, d, _) in zip(out.layers, blk.layers):
                A[s:e], D[s * R:e * R] = a, d
            out.pred[s:e] = blk.pred
        return out

    def _layer_signals_direct(self, x: torch.Tensor) -> "signals.Signals":
        """_layer_signals_block's signals for one output a sample (R = 1) of
        a network of Linear layers with a ReLU between each two, written
        block by block straight into the signals' storage, without autograd
        but for the head's link: the first layer's inputs are x itself,
        each later one's the ReLU of the layer below, and D of a hidden
        layer is D of the layer above times its weight, where that ReLU is
        open."""
        lin = [m for m in self.net if isinstance(m, torch.nn.Linear)]
        n = x.shape[0]
        # x's values as the first layer's inputs, through an alias: the
        # cache keeps the signals only while the caller's tensor lives.
        acts = [x.detach()] + [x.new_empty(n, m.out_features) for m in lin[:-1]]
        ds = [x.new_empty(n, m.out_features) for m in lin]
        pred = x.new_empty(n, self.head.outs)
        with torch.no_grad():
            for s in range(0, n, signals.BLOCK_ROWS):
                e = min(n, s + signals.BLOCK_ROWS)
                for l, m in enumerate(lin[:-1]):
                    h = acts[l + 1][s:e]
                    torch.matmul(acts[l][s:e], m.weight.T, out=h)
                    if m.bias is not None:
                        h += m.bias
                    h.relu_()
                last = lin[-1]
                z = acts[-1][s:e] @ last.weight.T
                if last.bias is not None:
                    z += last.bias
                with torch.enable_grad():
                    z.requires_grad_()
                    p = self.head.link(network.outputs(lambda xx: xx, z, self.head.outs))
                    g, = torch.autograd.grad(p[:, 0].sum(), z)
                pred[s:e] = p.detach()
                ds[-1][s:e] = g
                for l in range(len(lin) - 1, 0, -1):
                    d = ds[l - 1][s:e]
                    torch.matmul(ds[l][s:e], lin[l].weight, out=d)
                    # ReLU's own backward: d where the layer's output is
                    # positive, else 0.
                    torch.ops.aten.threshold_backward.grad_input(d, acts[l][s:e], 0, grad_input=d)
        return signals.Signals([(a, d, m.bias is not None) for a, d, m in zip(acts, ds, lin)], pred)

    def _layer_signals_block(self, x: torch.Tensor) -> "signals.Signals":
        """Each Linear layer's inputs on x (n x in), the gradients of the
        predictions (the head's link of the outputs) with respect to its
        outputs (n R x out, row i R + k that of sample i's prediction k, as
        the Jacobian's rows), and whether it has a bias, with the
        predictions: one forward pass and R backward passes over x (a row's
        predictions depend on its own row only, so the gradient of a
        column's sum holds each row's)."""
        acts, zs, biases = [], [], []
        R = self.head.rows_per_sample()
        with torch.enable_grad():
            h = x.detach().requires_grad_()
            for m in self.net:
                if isinstance(m, torch.nn.Linear):
                    acts.append(h.detach())
                    biases.append(m.bias is not None)
                    h = m(h)
                    zs.append(h)
                else:
                    h = m(h)
            p = self.head.link(network.outputs(lambda xx: xx, h, self.head.outs))
            ds = [torch.autograd.grad(p[:, r].sum(), zs, retain_graph=r < R - 1) for r in range(R)]
        n = x.shape[0]
        return signals.Signals([(a, torch.stack([d[l].detach() for d in ds], dim=1).reshape(n * R, -1), b)
                                for l, (a, b) in enumerate(zip(acts, biases))], p.detach())

    def gram(self, x: torch.Tensor, e: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """J(x)^T J(x) and J(x)^T e."""
        self.ready()
        self._input(x)
        n = x.shape[0] * self.head.rows_per_sample()
        if e.numel() != n:
            raise ModelError("%s: Gram: len(e) = %d, want %d" % (NAME, e.numel(), n))
        e = self._on(e)
        g = torch.zeros(self.num_params, self.num_params, dtype=self.dtype, device=self.device)
        b = torch.zeros(self.num_params, dtype=self.dtype, device=self.device)
        for i, j in self._jacobian_blocks(self._on(x)):
            g.addmm_(j.T, j)
            b.addmv_(j.T, e[i:i + j.shape[0]])
        return self._out(g), self._out(b)


_warned = set()


def _plain_mlp(net: torch.nn.Module) -> bool:
    """Whether net is the built-in network's kind: a Sequential of Linear
    and ReLU layers only."""
    return isinstance(net, torch.nn.Sequential) and len(net) > 0 and \
        all(isinstance(m, (torch.nn.Linear, torch.nn.ReLU)) for m in net)


def _alternating(net: torch.nn.Module) -> bool:
    """Whether net is Linear layers with one ReLU between each two (the
    built-in network's shape)."""
    kinds = [isinstance(m, torch.nn.Linear) for m in net]
    return len(kinds) % 2 == 1 and all(k == (i % 2 == 0) for i, k in enumerate(kinds))


def _warn_once(key, msg):
    if key not in _warned:
        _warned.add(key)
        print(msg, file=sys.stderr, flush=True)


def new_model(task: int, inputs: int, seed: int, classes: int, opts: dict, pretrained: bool = False) -> Model:
    """A new unfitted model for a NewModel request; UsageError for a bad
    spec (checked first, as the Go backends do) or option. A pretrained
    model (the full model of a run whose options name weights=) loads the
    weights= state dict when fitted; any other model is trained."""
    Head(task, inputs, classes)
    cfg = options.parse(opts)
    if pretrained and not cfg.weights:
        raise UsageError("%s: a pretrained model needs the weights= option (the state dict to load)" % NAME)
    user = network.load_user(cfg.module) if cfg.module else None
    return Model(task, inputs, seed, classes, cfg, user, pretrained)
