#!/usr/bin/env python3
"""numpy-linear: a lazyvi backend plugin in numpy, written on lazyvi_plugin;
the example to copy for another framework.

Least squares for regression and logistic regression for a binary
response, with an optional ridge penalty, as lazyvi's Go backend `linear`
fits them (backends/linear), so that the two give the same numbers:

  - each input column is standardised with the training rows' mean and
    standard deviation (n - 1), z = (x - mean) / sd; a constant column is
    only centred (sd 1), so that it becomes zero;
  - the parameters theta are the intercept, then one slope per column, on
    the standardised scale (M = p + 1);
  - regression minimises ||y - Z theta||^2 + ridge ||theta_1..p||^2 (the
    intercept is not penalised), solved as the least-squares problem
    [Z; sqrt(ridge) D] theta ~ [y; 0];
  - logistic regression minimises the log-loss sum plus ridge/2
    ||theta_1..p||^2 by Newton's method (iteratively reweighted least
    squares, the same augmented least squares each step, with step
    halving), to a relative change of the deviance below 1e-10.

The model is its own linearisation: the gradient of a prediction with
respect to theta is (1, z), times p (1 - p) for binary; the kit derives the
kernel, J^T a, the Jacobian products and the Gram matrix from it.

    vi estimate --data d.csv --plugin ./numpy_linear.py --opt ridge=1

(with lazyvi_plugin importable, and numpy, grpcio and protobuf installed.)
"""

import io
import math
import sys

import numpy as np

from lazyvi_plugin import (BINARY, REGRESSION, Backend, Capabilities, FitReport, Model, ModelError, ModelSpec,
                           Option, UsageError, serve)

NAME = "numpy-linear"

DEV_TOL = 1e-10    # logistic regression's convergence: relative change of the deviance
MIN_W = 1e-12      # floor of the IRLS weights p (1 - p)
MAX_ETA = 700.0    # keeps exp finite
P_LIMITS = 1e-15   # probabilities in the deviance are clipped to [P_LIMITS, 1 - P_LIMITS]
STATE_VERSION = 1  # save_state's encoding


def sigmoid(t):
    return 1 / (1 + np.exp(-np.clip(t, -MAX_ETA, MAX_ETA)))


def _options(opts):
    ridge, maxiter = 0.0, 100
    for k in sorted(opts):
        v = opts[k].strip()
        if k == "ridge":
            try:
                ridge = float(v)
            except ValueError:
                ridge = math.nan
            if not math.isfinite(ridge) or ridge < 0:
                raise UsageError("%s: option ridge: bad value %r (want a finite number >= 0)" % (NAME, v))
        elif k == "maxiter":
            try:
                maxiter = int(v)
            except ValueError:
                maxiter = 0
            if maxiter < 1:
                raise UsageError("%s: option maxiter: bad value %r (want a positive integer)" % (NAME, v))
        else:
            raise UsageError('%s: unknown option "%s" (known: ridge, maxiter)' % (NAME, k))
    return ridge, maxiter


class LinearModel(Model):
    def __init__(self, spec: ModelSpec) -> None:
        self.task, self.inputs = spec.task, spec.inputs
        self.ridge, self.maxiter = _options(spec.options)
        self.num_params = spec.inputs + 1
        self.theta = None

    # --- fitting -------------------------------------------------------

    def _input(self, x):
        if x.ndim != 2 or x.shape[1] != self.inputs:
            raise ModelError("%s: input has %d columns, model expects %d" % (NAME, x.shape[-1], self.inputs))
        if x.shape[0] == 0:
            raise ModelError("%s: input has no rows" % NAME)
        return x

    def _ready(self):
        if self.theta is None:
            raise ModelError("%s: model is not fitted" % NAME)

    def _design(self, x, s=None):
        """[1, z], each row scaled by s when given."""
        z = np.empty((x.shape[0], self.inputs + 1))
        z[:, 0] = 1
        z[:, 1:] = (x - self.mu) / self.sd
        return z if s is None else z * s[:, None]

    def _solve(self, z, b):
        """theta minimising ||z theta - b||^2 + ridge ||theta_1..p||^2."""
        if self.ridge > 0:
            q = z.shape[1]
            pen = np.zeros((q - 1, q))
            pen[:, 1:] = math.sqrt(self.ridge) * np.eye(q - 1)
            z, b = np.vstack([z, pen]), np.concatenate([b, np.zeros(q - 1)])
        return np.linalg.lstsq(z, b, rcond=None)[0]

    def fit(self, x, y, alive):
        if self.theta is not None:
            raise ModelError("%s: Fit called twice" % NAME)
        self._input(x)
        if len(y) != x.shape[0]:
            raise ModelError("%s: Fit: %d rows but %d responses" % (NAME, x.shape[0], len(y)))
        bad = np.flatnonzero(~np.isfinite(y))
        if bad.size:
            raise UsageError("%s: response is not finite in row %d" % (NAME, bad[0]))
        if self.task == BINARY:
            bad = np.flatnonzero((y != 0) & (y != 1))
            if bad.size:
                raise UsageError("%s: binary response must be 0 or 1, row %d is %g" % (NAME, bad[0], y[bad[0]]))
        n = x.shape[0]
        self.mu = x.mean(axis=0)
        ss = ((x - self.mu) ** 2).sum(axis=0)
        self.sd = np.where((ss > 0) & (n > 1), np.sqrt(ss / max(n - 1, 1)), 1.0)
        if not (np.isfinite(self.mu).all() and np.isfinite(self.sd).all()):
            raise UsageError("%s: input column %d is not finite" % (NAME, np.flatnonzero(~np.isfinite(self.mu + self.sd))[0]))
        z = self._design(x)
        if self.task == REGRESSION:
            self.theta = self._solve(z, y)
            self.report = FitReport(architecture="least squares, ridge %g" % self.ridge)
        else:
            self.theta, it = self._logistic(z, y, alive)
            self.report = FitReport(epochs=it, stopped_by="converged",
                                    architecture="logistic regression, ridge %g" % self.ridge)

    def _logistic(self, z, y, alive):
        ybar = min(max(y.mean(), 1e-6), 1 - 1e-6)
        theta = np.zeros(z.shape[1])
        theta[0] = math.log(ybar / (1 - ybar))

        def deviance(th):
            p = np.clip(sigmoid(z @ th), P_LIMITS, 1 - P_LIMITS)
            return -2 * np.where(y == 1, np.log(p), np.log(1 - p)).sum() + self.ridge * (th[1:] ** 2).sum()

        dev = deviance(theta)
        for it in range(1, self.maxiter + 1):
            if not alive():
                raise ModelError("%s: cancelled" % NAME)
            eta = z @ theta
            p = sigmoid(eta)
            sw = np.sqrt(np.maximum(p * (1 - p), MIN_W))
            nxt = self._solve(z * sw[:, None], sw * eta + (y - p) / sw)
            nd = deviance(nxt)
            for _ in range(30):  # step halving: the convex objective never rises
                if nd <= dev * (1 + 1e-12):
                    break
                nxt = (nxt + theta) / 2
                nd = deviance(nxt)
            change = abs(nd - dev) / (abs(nd) + 0.1)
            theta, dev = nxt, nd
            if change < DEV_TOL:
                return theta, it
        raise ModelError("%s: logistic regression did not converge in %d iterations (the inputs may separate the "
                         "classes perfectly: set a ridge penalty, e.g. --opt ridge=1, or raise --opt maxiter)"
                         % (NAME, self.maxiter))

    # --- predictions and gradients --------------------------------------

    def _eta(self, x, theta):
        b = theta[1:] / self.sd
        return (theta[0] - b @ self.mu) + x @ b

    def _predict_at(self, x, theta):
        self._ready()
        e = self._eta(self._input(x), theta)
        return (sigmoid(e) if self.task == BINARY else e).reshape(-1, 1)

    def predict(self, x):
        return self._predict_at(x, self.theta)

    def predict_shifted(self, x, dtheta):
        if len(dtheta) != self.num_params:
            raise ModelError("%s: PredictShifted: %d parameter shifts, model has %d parameters"
                             % (NAME, len(dtheta), self.num_params))
        return self._predict_at(x, self.theta + dtheta)

    def jacobian(self, x):
        self._ready()
        s = None
        if self.task == BINARY:
            p = sigmoid(self._eta(self._input(x), self.theta))
            s = p * (1 - p)
        return self._design(self._input(x), s)

    # --- persistence -----------------------------------------------------

    def save_state(self):
        self._ready()
        buf = io.BytesIO()
        r = self.report
        np.savez(buf, version=STATE_VERSION, shape=[self.task, self.inputs], mu=self.mu, sd=self.sd, theta=self.theta,
                 epochs=r.epochs, stopped_by=r.stopped_by, architecture=r.architecture)
        return buf.getvalue()

    def load_state(self, state):
        if self.theta is not None:
            raise ModelError("%s: Load into a fitted model" % NAME)
        try:
            st = np.load(io.BytesIO(state), allow_pickle=False)
            version, shape = int(st["version"]), [int(v) for v in st["shape"]]
            mu, sd, theta = st["mu"], st["sd"], st["theta"]
            report = FitReport(epochs=int(st["epochs"]), stopped_by=str(st["stopped_by"]),
                               architecture=str(st["architecture"]))
        except Exception as e:
            raise UsageError("%s: Load: not a saved model state: %s" % (NAME, e))
        if version != STATE_VERSION or shape != [self.task, self.inputs]:
            raise UsageError("%s: Load: the state is of another model (version %d, task and inputs %s; want %d, %s)"
                             % (NAME, version, shape, STATE_VERSION, [self.task, self.inputs]))
        self.mu, self.sd, self.theta, self.report = mu, sd, theta, report


class LinearBackend(Backend):
    name = NAME
    capabilities = Capabilities(gradients=True, kernel=True, classification=True, persist=True, matrix_free=True)
    options = (
        Option("ridge", "0", "L2 penalty on the slopes of the standardised inputs (not the intercept), "
                             "unnormalised like sklearn's Ridge(alpha); 0 is plain least squares / logistic regression"),
        Option("maxiter", "100", "maximum Newton (IRLS) iterations of logistic regression"),
    )

    def new_model(self, spec: ModelSpec) -> Model:
        if spec.task not in (REGRESSION, BINARY):
            raise UsageError("%s: unsupported task %d" % (NAME, spec.task))
        if spec.inputs < 1:
            raise UsageError("%s: model needs at least one input column, got %d" % (NAME, spec.inputs))
        if spec.pretrained:
            raise UsageError("%s: no pretrained models (nothing to load them from)" % NAME)
        return LinearModel(spec)


if __name__ == "__main__":
    sys.exit(serve(LinearBackend(), "vi estimate --plugin numpy_linear.py"))
