"""The Backend service of lazyvi.backend.v2 on a Backend of backend.py:
models by id until released, the request matrices lazyvi keeps here by
handle, and the codec between the two."""

import functools
import itertools
import threading
import traceback
from typing import Any, Callable, Dict, Optional

import grpc

from . import codec
from .backend import Backend, FitReport, Model, ModelSpec
from .errors import ModelError, RPCError, Unimplemented, UsageError
from .pb import backend_pb2 as pb
from .pb import backend_pb2_grpc


def _rpc(fn: Callable) -> Callable:
    """A servicer method whose errors become gRPC statuses: usage errors
    INVALID_ARGUMENT (lazyvi's framework.ErrUsage), a missing method
    UNIMPLEMENTED, the others their own code or UNKNOWN, with the error's
    text."""

    @functools.wraps(fn)
    def handle(self, req, ctx):
        try:
            return fn(self, req, ctx)
        except (RPCError, UsageError, ModelError, Unimplemented) as e:
            ctx.abort(e.code, "%s: %s" % (self.backend.name, e) if isinstance(e, Unimplemented) else str(e))
        except Exception as e:
            traceback.print_exc()
            ctx.abort(grpc.StatusCode.UNKNOWN, "%s: %s: %s: %s" % (self.backend.name, fn.__name__, type(e).__name__, e))

    return handle


def _report(r: Optional[FitReport]) -> Optional["pb.FitReport"]:
    if r is None:
        return None
    return pb.FitReport(epochs=r.epochs, stopped_by=r.stopped_by, valid_rows=r.valid_rows, valid_loss=r.valid_loss,
                        loaded=r.loaded, architecture=r.architecture)


class BackendService(backend_pb2_grpc.BackendServicer):
    """The Backend service on backend."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.models: Dict[int, Model] = {}
        self.kept: Dict[int, Any] = {}
        self.shapes: Dict[int, tuple] = {}
        self.ids = itertools.count(1)
        self.lock = threading.Lock()

    def _model(self, model_id: int) -> Model:
        with self.lock:
            m = self.models.get(model_id)
        if m is None:
            raise RPCError(grpc.StatusCode.NOT_FOUND, "no model %d (released?)" % model_id)
        return m

    def _add(self, m: Model) -> int:
        with self.lock:
            i = next(self.ids)
            self.models[i] = m
        return i

    def _matrix(self, name: str, m: Optional["pb.Matrix"]) -> Any:
        """A request matrix: unpacked; kept under its handle when it has
        one and data; looked up when it is a handle's reference."""
        if m is None or m.handle == 0 or m.rows <= 0 or m.cols <= 0:
            return self.backend.native(codec.array(m, name))
        if not m.data:
            with self.lock:
                t, shape = self.kept.get(m.handle), self.shapes.get(m.handle)
            if t is None:
                raise UsageError("%s: no matrix kept under handle %d (never sent, or released)" % (name, m.handle))
            if shape != (m.rows, m.cols):
                raise UsageError("%s: the matrix under handle %d is %d x %d, the reference says %d x %d"
                                 % (name, m.handle, shape[0], shape[1], m.rows, m.cols))
            return t
        a = codec.array(m, name)
        t = self.backend.native(a)
        with self.lock:
            self.kept[m.handle], self.shapes[m.handle] = t, a.shape
        return t

    def _vector(self, v: Optional["pb.Vector"], name: str) -> Any:
        return self.backend.native(codec.vector(v, name))

    def _single(self, options: Optional["pb.CallOptions"], declared: bool) -> Dict[str, bool]:
        """The keyword arguments of a call whose options ask for single
        precision where the backend declares it (declared): {"single":
        True}, else none, so that a model without the argument is called as
        before."""
        return {"single": True} if declared and options is not None and options.precision == pb.SINGLE else {}

    def _fitted(self, model_id: int, m: Model) -> "pb.Fitted":
        return pb.Fitted(model_id=model_id, num_params=m.num_params, report=_report(m.report))

    @_rpc
    def Describe(self, req, ctx):
        caps = self.backend.capabilities
        return pb.DescribeResponse(
            capabilities=pb.Capabilities(gradients=caps.gradients, kernel=caps.kernel, classification=caps.classification,
                                         multiclass=caps.multiclass, warm_start=caps.warm_start, persist=caps.persist,
                                         matrix_free=caps.matrix_free, single_precision=caps.single_precision,
                                         single_kernel=caps.single_kernel),
            options=[pb.OptionInfo(name=o.name, default_value=o.default, usage=o.usage) for o in self.backend.options])

    @_rpc
    def NewModel(self, req, ctx):
        spec = ModelSpec(task=req.task, inputs=req.inputs, seed=req.seed, classes=req.classes,
                         options=dict(req.options), pretrained=req.HasField("pretrained"))
        return pb.ModelRef(model_id=self._add(self.backend.new_model(spec)))

    @_rpc
    def Fit(self, req, ctx):
        m = self._model(req.model_id)
        m.fit(self._matrix("x", req.x), self._vector(req.y, "y"), ctx.is_active)
        return self._fitted(req.model_id, m)

    @_rpc
    def WarmStart(self, req, ctx):
        m = self._model(req.model_id)
        nm = m.warm_start(self._matrix("x", req.x), self._vector(req.y, "y"), req.steps, req.seed, ctx.is_active)
        return self._fitted(self._add(nm), nm)

    @_rpc
    def Save(self, req, ctx):
        return pb.ModelState(model_id=req.model_id, state=self._model(req.model_id).save_state())

    @_rpc
    def Load(self, req, ctx):
        m = self._model(req.model_id)
        m.load_state(req.state)
        return self._fitted(req.model_id, m)

    @_rpc
    def Release(self, req, ctx):
        with self.lock:
            for i in req.model_ids:
                self.models.pop(i, None)
            for h in req.matrix_handles:
                self.kept.pop(h, None)
                self.shapes.pop(h, None)
        return pb.ReleaseResponse()

    @_rpc
    def Predict(self, req, ctx):
        # A prepared prediction may be the model's single-precision pass's,
        # where the call asks for it and the backend declares single_precision.
        kw = self._single(req.options, self.backend.capabilities.single_precision) if req.prepared else {}
        return codec.matrix_pb(self._model(req.model_id).predict(self._matrix("x", req.x), **kw))

    @_rpc
    def Jacobian(self, req, ctx):
        return codec.matrix_pb(self._model(req.model_id).jacobian(self._matrix("x", req.x)))

    @_rpc
    def JacobianProduct(self, req, ctx):
        m = self._model(req.model_id)
        # x first, then v, as the Go server checks them.
        x = self._matrix("x", req.x)
        v = self.backend.native(codec.array(req.v if req.HasField("v") else None, "v"))
        kw = self._single(req.options, self.backend.capabilities.single_precision)
        if req.transpose:
            return codec.matrix_pb(m.jacobian_tmul(x, v, **kw))
        return codec.matrix_pb(m.jacobian_mul(x, v, **kw))

    @_rpc
    def JacobianTVec(self, req, ctx):
        m = self._model(req.model_id)
        kw = self._single(req.options, self.backend.capabilities.single_kernel)
        return codec.vector_pb(m.jacobian_tvec(self._matrix("x", req.x), self._vector(req.a, "a"), **kw))

    @_rpc
    def Kernel(self, req, ctx):
        m = self._model(req.model_id)
        x1 = self._matrix("x1", req.x1)
        x2 = self._matrix("x2", req.x2) if req.HasField("x2") else None
        k = codec.numpy(m.kernel(x1, x2, **self._single(req.options, self.backend.capabilities.single_kernel)))
        # Only an exactly symmetric kernel travels as its upper triangle.
        upper = x2 is None and req.allow_upper and k.ndim == 2 and k.shape[0] == k.shape[1] and (k == k.T).all()
        return codec.matrix_pb(k, upper=bool(upper))

    @_rpc
    def PredictShifts(self, req, ctx):
        m = self._model(req.model_id)
        shifts = []
        for i, s in enumerate(req.shifts):
            x = self._matrix("shift %d: x" % i, s.x)
            if s.HasField("x_train"):
                shifts.append((x, None, self._matrix("shift %d: x_train" % i, s.x_train), self._vector(s.a, "a")))
            else:
                shifts.append((x, self._vector(s.dtheta, "dtheta"), None, None))
        kw = self._single(req.options, self.backend.capabilities.single_kernel)
        return pb.PredictShiftsResponse(preds=[codec.matrix_pb(p) for p in m.predict_shifts(shifts, **kw)])

    @_rpc
    def Gram(self, req, ctx):
        m = self._model(req.model_id)
        g, b = m.gram(self._matrix("x", req.x), self._vector(req.e, "e"))
        return pb.GramResponse(g=codec.matrix_pb(g, upper=True), b=codec.vector_pb(b))
