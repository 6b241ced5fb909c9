"""The interface a framework fills: a Backend that makes Models.

A Backend says what its models can do (Capabilities) and which options they
take (Option), and makes an unfitted Model for each ModelSpec lazyvi asks
for. A Model is fitted once, then read-only: lazyvi calls its methods from
many threads at once.

Arrays. Every input arrives as a float64 C-contiguous numpy array, or as
what Backend.native made of one (a torch backend turns them into tensors);
lazyvi may send the same matrix to many calls, so a model must not modify
its inputs. Every answer may be anything numpy.asarray reads as float64 (a
numpy array, a CPU tensor).

Shapes. x is n x p (p = ModelSpec.inputs); predictions are n x 1 (means, or
P(Y = 1)) or n x K class probabilities (multiclass). The Jacobian of the
predictions with respect to the M = num_params parameters has R rows per
sample (R = K for multiclass, else 1), sample by sample: (n R) x M.

Only fit and predict are required. A model with gradients defines jacobian
and predict_shifted; the kernel, the Jacobian products, J^T a, the Gram
matrix and the shift batches then come from the Jacobian (Model's
defaults), and a model overrides them where it computes them better
(matrix-free, say). A method a model lacks raises Unimplemented, which
lazyvi reads as a missing capability.
"""

import abc
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .errors import Unimplemented

# The tasks of ModelSpec.task (lazyvi's framework.Task).
REGRESSION, BINARY, MULTICLASS = 0, 1, 2


@dataclass(frozen=True)
class Capabilities:
    """What the backend's models can do (the protocol's Capabilities,
    lazyvi's framework.Capabilities)."""

    gradients: bool = False       # jacobian, predict_shifted
    kernel: bool = False          # kernel, jacobian_tvec
    classification: bool = False  # binary responses
    multiclass: bool = False      # class labels 0..K-1
    warm_start: bool = False      # warm_start
    persist: bool = False         # save_state, load_state
    matrix_free: bool = False     # jacobian_mul, jacobian_tmul
    # single_precision: jacobian_mul and jacobian_tmul take single=True,
    # asking for products that may be computed in float32 (lazy's Krylov
    # solves at scale ask for them), and so does predict, asking for the
    # predictions of the float32 pass those products use (lazy's
    # residuals, within float32's rounding of float64's); single_kernel: kernel, jacobian_tvec
    # and predict_shifts (the dual form's J^T a) take it too (lazy's
    # penalty search on a subsample). See Model.jacobian_mul.
    single_precision: bool = False
    single_kernel: bool = False


@dataclass(frozen=True)
class Option:
    """A model option (ModelSpec.options key) with its default and usage,
    as `vi backends` lists it."""

    name: str
    default: str
    usage: str


@dataclass(frozen=True)
class ModelSpec:
    """What lazyvi asks a model to be: the task, the input columns, the seed
    of every random choice, the classes (K for multiclass, else 0), the
    options as given (--opt), and pretrained: the model is the full model,
    to be loaded from what the options name instead of trained."""

    task: int
    inputs: int
    seed: int
    classes: int = 0
    options: Dict[str, str] = field(default_factory=dict)
    pretrained: bool = False


@dataclass
class FitReport:
    """How training ended (lazyvi's framework.FitReport)."""

    epochs: int = 0
    stopped_by: str = ""
    valid_rows: int = 0
    valid_loss: float = 0.0
    loaded: bool = False
    architecture: str = ""


# A shifted prediction of PredictShifts: on x at theta + dtheta, or, when
# x_train is not None, at theta + J(x_train)^T a (dtheta None).
Shift = Tuple[Any, Optional[Any], Optional[Any], Optional[Any]]


class Model(abc.ABC):
    """One model of a backend; see the module documentation."""

    # num_params: M, the number of parameters, once fitted (with gradients).
    num_params: int = 0
    # report: how training ended, once fitted; None when the model says
    # nothing of its training.
    report: Optional[FitReport] = None

    @abc.abstractmethod
    def fit(self, x, y, alive: Callable[[], bool]) -> None:
        """Fits the model to x (n x p) and y (n responses: values, 0/1, or
        class labels 0..K-1 as floats); a pretrained model loads itself
        instead. alive() turns False when lazyvi no longer waits for the
        answer (cancellation): a long fit may stop then."""

    @abc.abstractmethod
    def predict(self, x):
        """Predictions on x: n x 1, or n x K class probabilities. A backend
        that declares single_precision takes single too: predict(x,
        single=True) may compute them in float32 (see jacobian_mul)."""

    def jacobian(self, x):
        """The Jacobian of the predictions on x with respect to the
        parameters, (n R) x M."""
        raise Unimplemented("Jacobian")

    def predict_shifted(self, x, dtheta):
        """Predictions on x at the parameters theta + dtheta (M values)."""
        raise Unimplemented("PredictShifted")

    def jacobian_mul(self, x, v, single: bool = False):
        """J(x) V for V of M x k: (n R) x k.

        single (asked only of a backend whose Capabilities declare
        single_precision, or single_kernel for kernel, jacobian_tvec and
        predict_shifts) allows float32 arithmetic: inputs rounded to
        float32, sums accumulated in float32, the answer float64; an
        element may then differ from the exact one by about k 2^-24 sum_j
        |J_ij| |V_jc| (k the longest sum). float64 meets that bound, so
        these defaults ignore it."""
        return np.asarray(self.jacobian(x)) @ np.asarray(v)

    def jacobian_tmul(self, x, u, single: bool = False):
        """J(x)^T U for U of (n R) x k: M x k (single: see jacobian_mul)."""
        return np.asarray(self.jacobian(x)).T @ np.asarray(u)

    def jacobian_tvec(self, x, a, single: bool = False):
        """J(x)^T a for a of n R values: M values (single: see
        jacobian_mul)."""
        return np.asarray(self.jacobian(x)).T @ np.asarray(a)

    def kernel(self, x1, x2, single: bool = False):
        """J(x1) J(x2)^T; x2 None: J(x1) J(x1)^T, exactly symmetric
        (single: see jacobian_mul)."""
        j1 = np.asarray(self.jacobian(x1))
        if x2 is None:
            k = j1 @ j1.T
            return (k + k.T) / 2
        return j1 @ np.asarray(self.jacobian(x2)).T

    def gram(self, x, e):
        """J(x)^T J(x) and J(x)^T e."""
        j = np.asarray(self.jacobian(x))
        return j.T @ j, j.T @ np.asarray(e)

    def predict_shifts(self, shifts: Sequence[Shift], single: bool = False) -> List[Any]:
        """Predictions for each (x, dtheta, x_train, a) of shifts: at theta +
        dtheta, or at theta + J(x_train)^T a when x_train is not None (single
        allows that product in float32: see jacobian_mul; the predictions
        stay float64)."""
        out = []
        for x, dtheta, x_train, a in shifts:
            if x_train is not None:
                dtheta = self.jacobian_tvec(x_train, a, single=True) if single else self.jacobian_tvec(x_train, a)
            out.append(self.predict_shifted(x, dtheta))
        return out

    def warm_start(self, x, y, steps: int, seed: int, alive: Callable[[], bool]) -> "Model":
        """A new fitted model: this one's parameters trained steps more
        optimizer steps (<= 0: one epoch) on x, y, seeded by seed."""
        raise Unimplemented("WarmStart")

    def save_state(self) -> bytes:
        """The fitted model's state, for load_state."""
        raise Unimplemented("Save")

    def load_state(self, state: bytes) -> None:
        """Makes this unfitted model the one whose save_state gave state;
        UsageError when state is no such thing."""
        raise Unimplemented("Load")


class Backend(abc.ABC):
    """A framework's backend; see the module documentation."""

    # name: how the backend's errors name it ("numpy-linear: ...").
    name: str = "backend"
    capabilities: Capabilities = Capabilities()
    options: Sequence[Option] = ()

    @abc.abstractmethod
    def new_model(self, spec: ModelSpec) -> Model:
        """An unfitted model for spec; UsageError for a task, input count
        or option the backend does not take."""

    def native(self, a: np.ndarray) -> Any:
        """What the models take for the float64 array a: a itself, or the
        framework's own array (a torch backend's torch.from_numpy(a))."""
        return a
