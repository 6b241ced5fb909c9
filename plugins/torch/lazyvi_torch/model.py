"""A model: one network with its head, fitted once, then read-only.

Gradients are those of the prediction (after the link) with respect to the
network's parameters, flattened in named_parameters() order, each
row-major: for the built-in network W1 (out x in), b1, W2, b2, ..., the Go
mlp's layout. The per-sample Jacobian comes from functorch (vmap of jacrev
over the rows, in blocks of bounded memory); J^T a is one backward pass;
the kernel and the Gram matrix are products of Jacobian blocks.

A fitted model may be called from many threads at once: every call borrows
its own functional copy of the network (functorch's functional modules swap
parameters in and out of a module, which one thread at a time may do).
"""

import contextlib
import copy
import sys
import threading

import torch

from . import network, options
from .errors import ModelError
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
    """functorch, imported on first use: it pulls in sympy, a second of the
    plugin's start-up that lazyvi waits for."""
    import functorch
    return functorch


def _generator(seed):
    g = torch.Generator()
    g.manual_seed(seed)
    return g


class Model:
    def __init__(self, spec_task, inputs, seed, classes, cfg, user):
        self.head = Head(spec_task, inputs, classes)
        self.inputs, self.seed, self.cfg, self.user = inputs, seed, cfg, user
        self.fitted = False
        self.losses = []
        self._fit_lock = threading.Lock()

    # --- fitting -------------------------------------------------------

    def _input(self, x):
        if x.dim() != 2 or x.shape[1] != self.inputs:
            raise ModelError("%s: input has %d columns, model expects %d" % (NAME, x.shape[1] if x.dim() == 2 else 0, self.inputs))
        if x.shape[0] == 0:
            raise ModelError("%s: input has no rows" % NAME)
        return x

    def ready(self):
        if not self.fitted:
            raise ModelError("%s: model is not fitted" % NAME)

    def fit(self, x, y, alive=None):
        with self._fit_lock:
            if self.fitted:
                raise ModelError("%s: Fit called twice" % NAME)
            self._input(x)
            if len(y) != x.shape[0]:
                raise ModelError("%s: Fit: %d rows but %d responses" % (NAME, x.shape[0], len(y)))
            net = network.build(self.cfg, self.user, self.inputs, self.head.outs, self.seed)
            # lazyvi's estimators zero a dropped feature's column: such a
            # model is a reduced one, trained from build, never loaded.
            if self.cfg.weights and not bool((x == 0).all(dim=0).any()):
                # The user's trained network: loaded, not trained. It predicts
                # the response itself (no standardisation).
                self.head.targets(y)
                network.load_weights(net, self.cfg.weights)
            elif self.user is not None and self.user.fit is not None:
                self.head.targets(y)
                with network.rng_lock:
                    torch.manual_seed(self.seed)
                    try:
                        self.user.fit(net, x, y.clone(), self.head.task_name)
                    except Exception as e:
                        raise ModelError("%s: fit in %s: %s: %s" % (NAME, self.user.path, type(e).__name__, e)) from e
                net = net.to(torch.float64)
            else:
                self.head.standardize(y)
                t = self.head.targets(y)
                tr = network.Trainer(net, self.head, x, t, self.cfg.batch, self.cfg.lr, _generator(self.seed))
                with self._user_rng(self.seed):
                    self.losses = tr.fit(self.cfg, alive)
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

    def _finish(self, net):
        net.eval()
        self.net = net
        f, params, buffers = _functorch().make_functional_with_buffers(net)
        self.params = tuple(p.detach() for p in params)
        self.buffers = tuple(b.detach() for b in buffers)
        self.sizes = [p.numel() for p in self.params]
        self.num_params = sum(self.sizes)
        self._free = [f]
        self._pool_lock = threading.Lock()
        self._bytes_per_row = None  # _row_bytes's measure
        self._forward_ad = True  # functorch.jvp works on this network
        self._double_backward = True  # its backward pass is differentiable
        self.fitted = True

    @contextlib.contextmanager
    def _functional(self):
        with self._pool_lock:
            f = self._free.pop() if self._free else None
        if f is None:
            f = _functorch().make_functional_with_buffers(self.net)[0]
        try:
            yield f
        finally:
            with self._pool_lock:
                self._free.append(f)

    def warm_start(self, x, y, steps, seed, alive=None):
        """A new model from this one's parameters (and head), trained steps
        Adam steps (<= 0: one epoch) on x, y, rows shuffled by seed."""
        self.ready()
        self._input(x)
        if len(y) != x.shape[0]:
            raise ModelError("%s: WarmStart: %d rows but %d responses" % (NAME, x.shape[0], len(y)))
        t = self.head.targets(y)
        nm = Model.__new__(Model)
        nm.head = copy.copy(self.head)
        nm.inputs, nm.seed, nm.cfg, nm.user = self.inputs, self.seed, self.cfg, self.user
        nm.losses, nm._fit_lock = [], threading.Lock()
        net = copy.deepcopy(self.net)  # self.net is never changed after _finish
        tr = network.Trainer(net, nm.head, x, t, self.cfg.batch, self.cfg.lr, _generator(seed ^ _WARM))
        with self._user_rng(seed ^ _WARM):
            tr.continue_(steps, alive)
        nm._finish(net)
        return nm

    # --- predictions ---------------------------------------------------

    def _shifted(self, dtheta):
        if dtheta.numel() != self.num_params:
            raise ModelError("%s: PredictShifted: len(dtheta) = %d, want NumParams() = %d" % (NAME, dtheta.numel(), self.num_params))
        return tuple(p + d.view_as(p) for p, d in zip(self.params, torch.split(dtheta, self.sizes)))

    def _predict(self, f, params, x):
        return self.head.link(network.outputs_blocked(lambda xx: f(params, self.buffers, xx), x, self.head.outs))

    def predict(self, x):
        self.ready()
        self._input(x)
        with torch.no_grad(), self._functional() as f:
            return self._predict(f, self.params, x)

    def predict_shifted(self, x, dtheta):
        self.ready()
        self._input(x)
        with torch.no_grad(), self._functional() as f:
            return self._predict(f, self._shifted(dtheta), x)

    def predict_shifts(self, shifts):
        """Predictions for (x, dtheta) pairs; dtheta None with (x_train, a)
        means J(x_train)^T a."""
        out = []
        for x, dtheta, x_train, a in shifts:
            if x_train is not None:
                dtheta = self.jacobian_tvec(x_train, a)
            out.append(self.predict_shifted(x, dtheta))
        return out

    # --- gradients -----------------------------------------------------

    def _jacobian_blocks(self, x):
        """Yields (first row, block of Jacobian rows) over x in row blocks:
        rows i*R + k are the gradients of output k of sample i."""
        self.ready()
        self._input(x)
        R, M = self.head.rows_per_sample(), self.num_params
        rows = max(1, JACOBIAN_BYTES // (8 * R * max(M, 1) * 4))
        n = x.shape[0]
        with self._functional() as f:
            def single(params, buffers, xi):
                z = network.outputs(lambda xx: f(params, buffers, xx), xi.unsqueeze(0), self.head.outs)
                p = self.head.link(z)[0]
                return p if self.head.task == MULTICLASS else p[:1]

            ft = _functorch()
            per_sample = ft.vmap(ft.jacrev(single), in_dims=(None, None, 0))
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

    def jacobian(self, x):
        return torch.cat([j for _, j in self._jacobian_blocks(x)], dim=0)

    def jacobian_tvec(self, x, a):
        """J(x)^T a by one backward pass."""
        self.ready()
        self._input(x)
        n = x.shape[0] * self.head.rows_per_sample()
        if a.numel() != n:
            raise ModelError("%s: JacobianTVec: len(a) = %d, want %d" % (NAME, a.numel(), n))
        with self._functional() as f, torch.enable_grad():
            ps = tuple(p.detach().requires_grad_() for p in self.params)
            pred = self.head.link(network.outputs(lambda xx: f(ps, self.buffers, xx), x, self.head.outs)).reshape(-1)
            gs = torch.autograd.grad(pred, ps, grad_outputs=a.reshape(-1), allow_unused=True)
        return torch.cat([(torch.zeros_like(p) if g is None else g).reshape(-1) for g, p in zip(gs, ps)])

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
        for rows in (PROBE_ROWS, 2 * PROBE_ROWS):
            total = [0]

            def pack(t):
                total[0] += t.numel() * t.element_size()
                return t

            ps = tuple(p.detach().requires_grad_() for p in self.params)
            with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                self._pred_flat(f, ps, torch.zeros(rows, self.inputs, dtype=torch.float64))
            sizes.append(total[0])
        per_row = max(8 * self.head.outs, (sizes[1] - sizes[0]) // PROBE_ROWS)
        with self._pool_lock:
            self._bytes_per_row = per_row
        return per_row

    def _product_rows(self, f, n):
        """Rows of x per block of a product: a block's forward pass (and its
        tangents or saved tensors, about as much again) within
        JACOBIAN_BYTES."""
        return max(1, min(n, JACOBIAN_BYTES // (2 * self._row_bytes(f))))

    def _tangents(self, col):
        return tuple(t.view_as(p) for p, t in zip(self.params, torch.split(col, self.sizes)))

    def jacobian_mul(self, x, v):
        """Phi(x) V for V of M x p, (n R) x p: one forward-mode pass
        (functorch.jvp) per column of V and block of rows, never the
        Jacobian."""
        nr = self._product_args("JacobianMul", x, v, self.num_params)
        R, p = self.head.rows_per_sample(), v.shape[1]
        cols = v.T.contiguous()  # column c of V as a contiguous row
        out = torch.empty(nr, p, dtype=torch.float64)
        with self._functional() as f:
            rows = self._product_rows(f, x.shape[0])
            for i in range(0, x.shape[0], rows):
                xb = x[i:i + rows]
                out[i * R:(i + xb.shape[0]) * R] = self._jvp_block(f, xb, cols)
        return out

    def _jvp_block(self, f, xb, cols):
        """Phi(xb) V, (b R) x p, V's columns the rows of cols."""
        if self._forward_ad:
            ft = _functorch()
            try:
                with transform_lock:
                    return torch.stack([ft.jvp(lambda ps: self._pred_flat(f, ps, xb), (self.params,),
                                               (self._tangents(c),))[1] for c in cols], dim=1)
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
            out = torch.zeros(pred.shape[0], cols.shape[0], dtype=torch.float64)
            for c, col in enumerate(cols):
                s = sum((g * t).sum() for g, t in zip(gs, self._tangents(col)) if g is not None)
                if torch.is_tensor(s) and s.requires_grad:
                    out[:, c] = torch.autograd.grad(s, u, retain_graph=True)[0]
        return out

    def _jacobian_products(self, xb, cols):
        """Phi(xb) V from the Jacobian of xb, in _jacobian_blocks's blocks
        of bounded memory: the fallback for a network neither functorch.jvp
        nor double backward passes can differentiate."""
        out = torch.empty(xb.shape[0] * self.head.rows_per_sample(), cols.shape[0], dtype=torch.float64)
        for i, jb in self._jacobian_blocks(xb):
            out[i:i + jb.shape[0]] = jb @ cols.T
        return out

    def jacobian_tmul(self, x, u):
        """Phi(x)^T U for U of (n R) x p, M x p: one backward pass per
        column of U and block of rows, never the Jacobian."""
        self._product_args("JacobianTMul", x, u, None)
        R, p = self.head.rows_per_sample(), u.shape[1]
        out = torch.zeros(self.num_params, p, dtype=torch.float64)
        with self._functional() as f:
            rows = self._product_rows(f, x.shape[0])
            for i in range(0, x.shape[0], rows):
                xb = x[i:i + rows]
                ub = u[i * R:(i + xb.shape[0]) * R]
                with torch.enable_grad():
                    ps = tuple(q.detach().requires_grad_() for q in self.params)
                    pred = self._pred_flat(f, ps, xb)
                    for c in range(p):
                        gs = torch.autograd.grad(pred, ps, grad_outputs=ub[:, c], retain_graph=c < p - 1,
                                                 allow_unused=True)
                        out[:, c] += torch.cat([(torch.zeros_like(q) if g is None else g).reshape(-1)
                                                for g, q in zip(gs, ps)])
        return out

    def kernel(self, x1, x2):
        """J(x1) J(x2)^T; x2 None: J(x1) J(x1)^T, exactly symmetric."""
        j1 = self.jacobian(x1)
        if x2 is None:
            k = j1 @ j1.T
            return (k + k.T) / 2
        out = torch.empty(j1.shape[0], x2.shape[0] * self.head.rows_per_sample(), dtype=torch.float64)
        for i, j2 in self._jacobian_blocks(x2):
            out[:, i:i + j2.shape[0]] = j1 @ j2.T
        return out

    def gram(self, x, e):
        """J(x)^T J(x) and J(x)^T e."""
        n = x.shape[0] * self.head.rows_per_sample()
        if e.numel() != n:
            raise ModelError("%s: Gram: len(e) = %d, want %d" % (NAME, e.numel(), n))
        g = torch.zeros(self.num_params, self.num_params, dtype=torch.float64)
        b = torch.zeros(self.num_params, dtype=torch.float64)
        for i, j in self._jacobian_blocks(x):
            g.addmm_(j.T, j)
            b.addmv_(j.T, e[i:i + j.shape[0]])
        return g, b


_warned = set()


def _warn_once(key, msg):
    if key not in _warned:
        _warned.add(key)
        print(msg, file=sys.stderr, flush=True)


def new_model(task, inputs, seed, classes, opts):
    """A new unfitted model for a NewModel request; UsageError for a bad
    spec (checked first, as the Go backends do) or option."""
    Head(task, inputs, classes)
    cfg = options.parse(opts)
    user = network.load_user(cfg.module) if cfg.module else None
    return Model(task, inputs, seed, classes, cfg, user)
