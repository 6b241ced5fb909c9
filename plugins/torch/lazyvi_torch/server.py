"""The plugin process: go-plugin's handshake and services, and the Backend
service of lazyvi.backend.v2 (proto/lazyvi/backend/v2/backend.proto) on
the models of model.py.

go-plugin (github.com/hashicorp/go-plugin, docs/guide-plugin-write-non-go.md)
asks a plugin in another language to
  - refuse to run unless the magic cookie is in its environment;
  - serve gRPC and print "CORE|APP|tcp|ADDR|grpc" as its first line on
    stdout, CORE = 1, APP = the application's protocol version (lazyvi's
    backendplugin.ProtocolVersion);
  - serve the health service with "plugin" SERVING (lazyvi's watchdog asks
    it while calls are in flight, and kills a plugin that stops answering);
and uses, when present, GRPCController.Shutdown to end the plugin gracefully
and GRPCStdio to forward its output. Everything this process writes after
the handshake goes to stderr, which lazyvi passes on, so GRPCStdio streams
nothing.
"""

import functools
import itertools
import os
import signal
import sys
import threading
import time
import traceback
from concurrent import futures
from typing import Callable, Dict, Optional

import grpc
import torch

from . import codec
from .errors import ModelError, RPCError, UsageError
from .model import Model, new_model
from .options import DEFAULTS, INFO, NAME
from .pb import backend_pb2 as pb
from .pb import backend_pb2_grpc
from .pb import grpc_controller_pb2, grpc_controller_pb2_grpc, grpc_stdio_pb2_grpc, health_pb2, health_pb2_grpc


def protocol_version(package: str) -> int:
    """N of a proto package name lazyvi.backend.vN (N > 0); a ValueError
    otherwise."""
    prefix = "lazyvi.backend.v"
    v = package[len(prefix):] if package.startswith(prefix) else ""
    if not v.isdigit() or int(v) <= 0:
        raise ValueError("proto package %r: want lazyvi.backend.vN" % package)
    return int(v)


# The handshake of lazyvi's backendplugin.Handshake.
COOKIE_KEY = "LAZYVI_BACKEND_PLUGIN"
COOKIE_VALUE = "d9c1c5c2-0f4e-4d55-9a3e-lazyvi-backend"
# The protocol's version: N of the proto package lazyvi.backend.vN that the
# code in pb was generated from, as lazyvi reads it
# (backendplugin.ProtocolVersion).
PROTOCOL_VERSION = protocol_version(pb.DESCRIPTOR.package)

# What the models can do (the protocol's Capabilities).
CAPABILITIES = dict(gradients=True, kernel=True, classification=True, multiclass=True,
                    warm_start=True, persist=True, matrix_free=True)

# Threads serving calls (created as needed): more than lazyvi has in flight
# at its usual --workers, so that a health check never queues behind long
# Fits (the watchdog kills a plugin that does not answer it for 30 s).
WORKERS = 256

MAX_MESSAGE = 2 ** 31 - 1


def _rpc(fn: Callable) -> Callable:
    """A servicer method whose errors become gRPC statuses: usage errors
    INVALID_ARGUMENT (lazyvi's framework.ErrUsage), the others their own
    code or UNKNOWN, with the error's text."""

    @functools.wraps(fn)
    def handle(self, req, ctx):
        try:
            return fn(self, req, ctx)
        except (RPCError, UsageError, ModelError) as e:
            ctx.abort(e.code, str(e))
        except Exception as e:
            traceback.print_exc()
            ctx.abort(grpc.StatusCode.UNKNOWN, "%s: %s: %s: %s" % (NAME, fn.__name__, type(e).__name__, e))

    return handle


def _single(opts: "pb.CallOptions") -> bool:
    return opts is not None and opts.precision == pb.SINGLE


class Backend(backend_pb2_grpc.BackendServicer):
    """The Backend service: models by id until released, and the request
    matrices the client keeps here by handle."""

    def __init__(self) -> None:
        self.models: Dict[int, Model] = {}
        self.kept: Dict[int, torch.Tensor] = {}
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

    def _matrix(self, name: str, m: Optional["pb.Matrix"]) -> torch.Tensor:
        """A request matrix: unpacked; kept under its handle when it has
        one and data; looked up when it is a handle's reference."""
        if m is None or m.handle == 0 or m.rows <= 0 or m.cols <= 0:
            return codec.tensor(m, name)
        if not m.data:
            with self.lock:
                t = self.kept.get(m.handle)
            if t is None:
                raise UsageError("%s: no matrix kept under handle %d (never sent, or released)" % (name, m.handle))
            if tuple(t.shape) != (m.rows, m.cols):
                raise UsageError("%s: the matrix under handle %d is %d x %d, the reference says %d x %d"
                                 % (name, m.handle, t.shape[0], t.shape[1], m.rows, m.cols))
            return t
        t = codec.tensor(m, name)
        with self.lock:
            self.kept[m.handle] = t
        return t

    @staticmethod
    def _fitted(model_id: int, m: Model) -> "pb.Fitted":
        r = m.report
        return pb.Fitted(model_id=model_id, num_params=m.num_params,
                         report=pb.FitReport(epochs=r.epochs, stopped_by=r.stopped_by, loaded=r.loaded,
                                             architecture=r.architecture))

    @_rpc
    def Describe(self, req, ctx):
        return pb.DescribeResponse(capabilities=pb.Capabilities(**CAPABILITIES),
                                   options=[pb.OptionInfo(name=n, default_value=DEFAULTS[n], usage=u) for n, u in INFO])

    @_rpc
    def NewModel(self, req, ctx):
        m = new_model(req.task, req.inputs, req.seed, req.classes, dict(req.options), req.HasField("pretrained"))
        return pb.ModelRef(model_id=self._add(m))

    @_rpc
    def Fit(self, req, ctx):
        m = self._model(req.model_id)
        m.fit(self._matrix("x", req.x), codec.vector(req.y, "y"), ctx.is_active)
        return self._fitted(req.model_id, m)

    @_rpc
    def WarmStart(self, req, ctx):
        m = self._model(req.model_id)
        nm = m.warm_start(self._matrix("x", req.x), codec.vector(req.y, "y"), req.steps, req.seed, ctx.is_active)
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
        return pb.ReleaseResponse()

    @_rpc
    def Predict(self, req, ctx):
        return codec.matrix_pb(self._model(req.model_id).predict(self._matrix("x", req.x)))

    @_rpc
    def Jacobian(self, req, ctx):
        return codec.matrix_pb(self._model(req.model_id).jacobian(self._matrix("x", req.x)))

    @_rpc
    def JacobianProduct(self, req, ctx):
        m = self._model(req.model_id)
        # x first, then v, as the Go server checks them.
        x = self._matrix("x", req.x)
        v = codec.tensor(req.v if req.HasField("v") else None, "v")
        if req.transpose:
            return codec.matrix_pb(m.jacobian_tmul(x, v))
        return codec.matrix_pb(m.jacobian_mul(x, v))

    @_rpc
    def JacobianTVec(self, req, ctx):
        m = self._model(req.model_id)
        return codec.vector_pb(m.jacobian_tvec(self._matrix("x", req.x), codec.vector(req.a, "a")))

    @_rpc
    def Kernel(self, req, ctx):
        m = self._model(req.model_id)
        x1 = self._matrix("x1", req.x1)
        x2 = self._matrix("x2", req.x2) if req.HasField("x2") else None
        k = m.kernel(x1, x2)
        # kernel() makes a symmetric kernel exactly symmetric.
        return codec.matrix_pb(k, upper=x2 is None and req.allow_upper)

    @_rpc
    def PredictShifts(self, req, ctx):
        m = self._model(req.model_id)
        shifts = []
        for i, s in enumerate(req.shifts):
            x = self._matrix("shift %d: x" % i, s.x)
            if s.HasField("x_train"):
                shifts.append((x, None, self._matrix("shift %d: x_train" % i, s.x_train), codec.vector(s.a, "a")))
            else:
                shifts.append((x, codec.vector(s.dtheta, "dtheta"), None, None))
        return pb.PredictShiftsResponse(preds=[codec.matrix_pb(p) for p in m.predict_shifts(shifts)])

    @_rpc
    def Gram(self, req, ctx):
        m = self._model(req.model_id)
        g, b = m.gram(self._matrix("x", req.x), codec.vector(req.e, "e"))
        return pb.GramResponse(g=codec.matrix_pb(g, upper=True), b=codec.vector_pb(b))


class Health(health_pb2_grpc.HealthServicer):
    def Check(self, request, context):
        return health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)


class Stdio(grpc_stdio_pb2_grpc.GRPCStdioServicer):
    def StreamStdio(self, request, context):
        return iter(())


class Controller(grpc_controller_pb2_grpc.GRPCControllerServicer):
    def __init__(self, stop: threading.Event) -> None:
        self.stop = stop

    def Shutdown(self, request, context):
        self.stop.set()
        return grpc_controller_pb2.Empty()


def _watch_parent(parent: int, stop: threading.Event) -> None:
    """Exits when the process that started this one (lazyvi), pid parent, is
    gone: this process is then re-parented, and nothing of it must outlive
    lazyvi."""
    while not stop.is_set():
        if os.getppid() != parent:
            os._exit(1)
        time.sleep(0.5)


def serve() -> int:
    """Serves until lazyvi shuts the plugin down or goes away; run by hand
    (without the handshake cookie) it says it is a plugin and returns 1."""
    if os.environ.get(COOKIE_KEY) != COOKIE_VALUE:
        sys.stderr.write("This binary is a plugin. These are not meant to be executed directly.\n"
                         "Please execute the program that consumes these plugins, which will\n"
                         "load any plugins automatically (vi estimate --plugin lazyvi-torch).\n")
        return 1
    parent = os.getppid()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # lazyvi handles ^C, then ends the plugin
    torch.set_default_dtype(torch.float64)
    stop = threading.Event()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=WORKERS),
                         options=[("grpc.max_receive_message_length", MAX_MESSAGE),
                                  ("grpc.max_send_message_length", MAX_MESSAGE)])
    backend_pb2_grpc.add_BackendServicer_to_server(Backend(), server)
    health_pb2_grpc.add_HealthServicer_to_server(Health(), server)
    grpc_stdio_pb2_grpc.add_GRPCStdioServicer_to_server(Stdio(), server)
    grpc_controller_pb2_grpc.add_GRPCControllerServicer_to_server(Controller(stop), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    os.write(1, ("1|%d|tcp|127.0.0.1:%d|grpc\n" % (PROTOCOL_VERSION, port)).encode())
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    threading.Thread(target=_watch_parent, args=(parent, stop), daemon=True).start()
    stop.wait()
    server.stop(None).wait(1)
    sys.stderr.flush()
    # Straight out: the interpreter's own shutdown (torch's, the thread
    # pool's) can outlast go-plugin's 2 s grace for a graceful exit.
    os._exit(0)


def main() -> int:
    """The lazyvi-torch command."""
    return serve()
