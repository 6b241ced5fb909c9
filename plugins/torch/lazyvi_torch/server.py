"""The plugin process: go-plugin's handshake and services, and the Backend
service of lazyvi.backend.v1 on the models of model.py.

go-plugin (github.com/hashicorp/go-plugin, docs/guide-plugin-write-non-go.md
and examples/grpc/plugin-python) asks a plugin in another language to
  - refuse to run unless the magic cookie is in its environment;
  - serve gRPC and print "CORE|APP|tcp|ADDR|grpc" as its first line on
    stdout, CORE = 1, APP = the application's protocol version (lazyvi's
    backendplugin.ProtocolVersion, 1);
  - serve the health service with "plugin" SERVING (lazyvi's watchdog asks
    it while calls are in flight, and kills a plugin that stops answering);
and uses, when present, GRPCController.Shutdown to end the plugin gracefully
and GRPCStdio to forward its output. Everything this process writes after
the handshake goes to stderr, which lazyvi passes on (go-plugin drops the
plugin's later stdout lines), so GRPCStdio streams nothing.
"""

import collections
import itertools
import os
import signal
import sys
import threading
import time
import traceback
from concurrent import futures

import grpc
import torch

from . import wire
from .errors import ModelError, RPCError, UsageError
from .model import new_model
from .options import DEFAULTS, INFO, NAME
from .pb import backend_pb2 as pb
from .pb import grpc_controller_pb2, grpc_controller_pb2_grpc, grpc_stdio_pb2_grpc, health_pb2, health_pb2_grpc

# The handshake of lazyvi's backendplugin.Handshake.
COOKIE_KEY = "LAZYVI_BACKEND_PLUGIN"
COOKIE_VALUE = "d9c1c5c2-0f4e-4d55-9a3e-lazyvi-backend"
PROTOCOL_VERSION = 1

# The matrix cache's byte budget (LAZYVI_TORCH_CACHE_BYTES overrides it, for
# the tests of cache misses) and accounting, as backendplugin's.
CACHE_BYTES = int(os.environ.get("LAZYVI_TORCH_CACHE_BYTES", 64 << 20))
ENTRY_OVERHEAD = 128
CACHE_MISS = "backendplugin: matrix cache miss"

# Capabilities. LAZYVI_TORCH_WITHOUT (comma-separated field names) drops
# some of the protocol's optional additions, so that the tests can check
# lazyvi's fallbacks against this server. matrix_free (the models' products
# with the Jacobian) and jacobian_products (the RPCs that serve them) go
# together: without matrix_free lazyvi forms the Jacobian, as with a plugin
# older than both.
CAPABILITIES = dict(gradients=True, kernel=True, classification=True, multiclass=True,
                    warm_start=True, matrix_cache=True, gram=True, shift_batch=True,
                    matrix_free=True, jacobian_products=True)

# Threads serving calls (created as needed): more than lazyvi has in flight
# at its usual --workers, so that a health check never queues behind long
# Fits (the watchdog kills a plugin that does not answer it for 30 s).
WORKERS = 256

MAX_MESSAGE = 2 ** 31 - 1


class MatrixCache:
    """Request matrices sent with a key, LRU within a byte budget (see the
    Matrix message in internal/pb/backend.proto)."""

    def __init__(self, budget):
        self.budget, self.used = budget, 0
        self.entries = collections.OrderedDict()  # key -> (tensor, size)
        self.lock = threading.Lock()

    def resolve(self, name, m):
        if m is None or not m.key or m.rows <= 0 or m.cols <= 0:
            return to_tensor(name, m)
        if len(m.data) == 0:  # a reference
            with self.lock:
                e = self.entries.get(m.key)
                if e is not None:
                    self.entries.move_to_end(m.key)
            if e is None:
                raise RPCError(grpc.StatusCode.FAILED_PRECONDITION, CACHE_MISS)
            t = e[0]
            if t.shape != (m.rows, m.cols):
                raise RPCError(grpc.StatusCode.INVALID_ARGUMENT,
                               "%s: the cached matrix under this key is %d x %d, the reference says %d x %d"
                               % (name, t.shape[0], t.shape[1], m.rows, m.cols))
            return t
        t = to_tensor(name, m)
        size = 8 * t.numel() + len(m.key) + ENTRY_OVERHEAD
        with self.lock:
            if m.key in self.entries:
                self.entries.move_to_end(m.key)
            elif size <= self.budget:
                self.entries[m.key] = (t, size)
                self.used += size
                while self.used > self.budget:
                    _, (_, s) = self.entries.popitem(last=False)
                    self.used -= s
        return t


def to_tensor(name, m):
    """The request matrix m as a float64 tensor (INVALID_ARGUMENT when
    missing or malformed)."""
    if m is None:
        raise RPCError(grpc.StatusCode.INVALID_ARGUMENT, "%s: missing matrix" % name)
    data = torch.from_numpy(m.data)
    if m.upper:
        n = m.rows
        if n != m.cols or n < 0 or len(m.data) != n * (n + 1) // 2:
            raise RPCError(grpc.StatusCode.INVALID_ARGUMENT, "%s: malformed symmetric matrix: %d x %d with %d values"
                           % (name, m.rows, m.cols, len(m.data)))
        iu = torch.triu_indices(n, n)
        out = torch.zeros(n, n, dtype=torch.float64)
        out[iu[0], iu[1]] = data
        out[iu[1], iu[0]] = data
        return out
    if m.rows < 0 or m.cols < 0 or len(m.data) != m.rows * m.cols:
        raise RPCError(grpc.StatusCode.INVALID_ARGUMENT, "%s: malformed matrix: %d x %d with %d values"
                       % (name, m.rows, m.cols, len(m.data)))
    return data.reshape(m.rows, m.cols)


class Backend:
    """The Backend service: models by id until released."""

    def __init__(self, caps):
        self.caps = caps
        self.models = {}
        self.ids = itertools.count(1)
        self.lock = threading.Lock()
        self.cache = MatrixCache(CACHE_BYTES)

    def _resolve(self, name, m):
        if self.caps["matrix_cache"]:
            return self.cache.resolve(name, m)
        return to_tensor(name, m)

    def _model(self, model_id):
        with self.lock:
            m = self.models.get(model_id)
        if m is None:
            raise RPCError(grpc.StatusCode.NOT_FOUND, "no model %d (released?)" % model_id)
        return m

    def _add(self, m):
        with self.lock:
            i = next(self.ids)
            self.models[i] = m
        return wire.encode_model_ref(i)

    def Capabilities(self, _req, _ctx):
        return pb.CapabilitiesResponse(**self.caps).SerializeToString()

    def Options(self, _req, _ctx):
        return pb.OptionsResponse(options=[pb.OptionInfo(name=n, default_value=DEFAULTS[n], usage=u)
                                           for n, u in INFO]).SerializeToString()

    def NewModel(self, req, _ctx):
        r = pb.NewModelRequest.FromString(req)
        return self._add(new_model(r.task, r.inputs, r.seed, r.classes, dict(r.options)))

    def Fit(self, req, ctx):
        r = wire.decode_fit(req)
        m = self._model(r.model_id)
        m.fit(self._resolve("x", r.x), r.y, ctx.is_active)
        return b""

    def Predict(self, req, _ctx):
        r = wire.decode_matrix_request(req)
        m = self._model(r.model_id)
        return wire.encode_matrix(m.predict(self._resolve("x", r.x)))

    def NumParams(self, req, _ctx):
        m = self._model(wire.decode_model_ref(req).model_id)
        m.ready()
        return wire.encode_num_params(m.num_params)

    def Jacobian(self, req, _ctx):
        r = wire.decode_matrix_request(req)
        m = self._model(r.model_id)
        return wire.encode_matrix(m.jacobian(self._resolve("x", r.x)))

    def PredictShifted(self, req, _ctx):
        r = wire.decode_predict_shifted(req)
        m = self._model(r.model_id)
        return wire.encode_matrix(m.predict_shifted(self._resolve("x", r.x), r.dtheta))

    def Kernel(self, req, _ctx):
        r = wire.decode_kernel(req)
        m = self._model(r.model_id)
        x1 = self._resolve("x1", r.x1)
        x2 = None if r.x2 is None else self._resolve("x2", r.x2)
        k = m.kernel(x1, x2)
        # kernel() makes a symmetric kernel exactly symmetric.
        return wire.encode_matrix(k, upper=x2 is None and r.allow_upper and k.shape[0] > 0)

    def JacobianTVec(self, req, _ctx):
        r = wire.decode_jtvec(req)
        m = self._model(r.model_id)
        return wire.encode_vector(m.jacobian_tvec(self._resolve("x", r.x), r.a))

    def PredictShifts(self, req, _ctx):
        r = wire.decode_predict_shifts(req)
        m = self._model(r.model_id)
        shifts = []
        for i, s in enumerate(r.shifts):
            x = self._resolve("shift %d: x" % i, s.x)
            xt = None if s.x_train is None else self._resolve("shift %d: x_train" % i, s.x_train)
            shifts.append((x, s.dtheta, xt, s.a))
        return wire.encode_predict_shifts(m.predict_shifts(shifts))

    def Gram(self, req, _ctx):
        r = wire.decode_gram(req)
        m = self._model(r.model_id)
        g, b = m.gram(self._resolve("x", r.x), r.e)
        return wire.encode_gram(g, b)

    def JacobianMul(self, req, _ctx):
        r = wire.decode_jacobian_product(req)
        m = self._model(r.model_id)
        # x first, then v, as the Go server checks them; v is never keyed.
        x = self._resolve("x", r.x)
        return wire.encode_matrix(m.jacobian_mul(x, to_tensor("v", r.v)))

    def JacobianTMul(self, req, _ctx):
        r = wire.decode_jacobian_product(req)
        m = self._model(r.model_id)
        x = self._resolve("x", r.x)
        return wire.encode_matrix(m.jacobian_tmul(x, to_tensor("v", r.v)))

    def WarmStart(self, req, ctx):
        r = wire.decode_warm_start(req)
        m = self._model(r.model_id)
        return self._add(m.warm_start(self._resolve("x", r.x), r.y, r.steps, r.seed, ctx.is_active))

    def Release(self, req, _ctx):
        model_id = wire.decode_model_ref(req).model_id
        with self.lock:
            self.models.pop(model_id, None)
        return b""


def _unary(op, fn):
    """A raw-bytes handler for fn; its errors become gRPC statuses: usage
    errors INVALID_ARGUMENT (lazyvi's framework.ErrUsage), the others their
    own code or UNKNOWN, with the error's text."""

    def handle(req, ctx):
        try:
            return fn(req, ctx)
        except (RPCError, UsageError, ModelError) as e:
            ctx.abort(e.code, str(e))
        except wire.WireError as e:
            ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, "%s: malformed request: %s" % (op, e))
        except Exception as e:
            traceback.print_exc()
            ctx.abort(grpc.StatusCode.UNKNOWN, "%s: %s: %s: %s" % (NAME, op, type(e).__name__, e))

    return grpc.unary_unary_rpc_method_handler(handle)


def backend_handler(b):
    ops = ["Capabilities", "Options", "NewModel", "Fit", "Predict", "NumParams", "Jacobian", "PredictShifted",
           "Kernel", "JacobianTVec", "PredictShifts", "Gram", "WarmStart", "Release", "JacobianMul", "JacobianTMul"]
    if not b.caps["shift_batch"]:
        ops.remove("PredictShifts")
    if not b.caps["gram"]:
        ops.remove("Gram")
    if not b.caps["jacobian_products"]:
        ops.remove("JacobianMul")
        ops.remove("JacobianTMul")
    return grpc.method_handlers_generic_handler("lazyvi.backend.v1.Backend", {op: _unary(op, getattr(b, op)) for op in ops})


class Health(health_pb2_grpc.HealthServicer):
    def Check(self, request, context):
        return health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)


class Stdio(grpc_stdio_pb2_grpc.GRPCStdioServicer):
    def StreamStdio(self, request, context):
        return iter(())


class Controller(grpc_controller_pb2_grpc.GRPCControllerServicer):
    def __init__(self, stop):
        self.stop = stop

    def Shutdown(self, request, context):
        self.stop.set()
        return grpc_controller_pb2.Empty()


def capabilities():
    caps = dict(CAPABILITIES)
    for name in filter(None, os.environ.get("LAZYVI_TORCH_WITHOUT", "").split(",")):
        if name.strip() not in caps:
            raise SystemExit("lazyvi-torch: LAZYVI_TORCH_WITHOUT: unknown capability %r (known: %s)"
                             % (name, ", ".join(caps)))
        caps[name.strip()] = False
    if not caps["gradients"]:
        caps["kernel"] = caps["gram"] = caps["shift_batch"] = caps["matrix_free"] = False
    if not caps["matrix_free"]:
        caps["jacobian_products"] = False
    return caps


def _watch_parent(parent, stop):
    """Exits when the process that started this one (lazyvi), pid parent, is
    gone: this process is then re-parented, and nothing of it must outlive
    lazyvi."""
    while not stop.is_set():
        if os.getppid() != parent:
            os._exit(1)
        time.sleep(0.5)


def serve():
    """Serves until lazyvi shuts the plugin down or goes away."""
    # The launcher read the parent's pid first thing; a parent that died
    # since has made this process an orphan already.
    parent = int(os.environ.get("LAZYVI_TORCH_PARENT") or os.getppid())
    if os.getppid() != parent:
        os._exit(1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # lazyvi handles ^C, then ends the plugin
    torch.set_default_dtype(torch.float64)
    stop = threading.Event()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=WORKERS),
                         options=[("grpc.max_receive_message_length", MAX_MESSAGE),
                                  ("grpc.max_send_message_length", MAX_MESSAGE)])
    server.add_generic_rpc_handlers((backend_handler(Backend(capabilities())),))
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
