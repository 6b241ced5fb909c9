"""The kit's Backend service through a real gRPC channel: a toy backend
(one parameter, prediction theta * x_1) served by Server, called as lazyvi
calls it; the errors' codes, kept matrices, the defaults derived from the
Jacobian, and the plugin command's refusal to run by hand."""

import os
import subprocess
import sys

import grpc
import numpy as np
import pytest

import lazyvi_plugin
from lazyvi_plugin import codec
from lazyvi_plugin.pb import backend_pb2 as pb
from lazyvi_plugin.pb import backend_pb2_grpc, health_pb2, health_pb2_grpc


class Scale(lazyvi_plugin.Model):
    """theta * x[:, 0], theta fitted by least squares."""

    def __init__(self):
        self.theta = None
        self.num_params = 1

    def fit(self, x, y, alive):
        self.theta = float(x[:, 0] @ y / (x[:, 0] @ x[:, 0]))
        self.report = lazyvi_plugin.FitReport(architecture="scale")

    def predict(self, x):
        if self.theta is None:
            raise lazyvi_plugin.ModelError("scale: model is not fitted")
        return (self.theta * x[:, 0]).reshape(-1, 1)

    def jacobian(self, x):
        return x[:, :1].copy()

    def predict_shifted(self, x, dtheta):
        return ((self.theta + dtheta[0]) * x[:, 0]).reshape(-1, 1)


class ScaleBackend(lazyvi_plugin.Backend):
    name = "scale"
    capabilities = lazyvi_plugin.Capabilities(gradients=True, kernel=True, matrix_free=True)
    options = (lazyvi_plugin.Option("unused", "1", "an option"),)

    def new_model(self, spec):
        if spec.options:
            raise lazyvi_plugin.UsageError("scale: unknown option %s" % sorted(spec.options)[0])
        return Scale()


@pytest.fixture(scope="module")
def stub():
    with lazyvi_plugin.Server(ScaleBackend()) as s:
        core, version, network, addr, proto = s.handshake.split("|")
        assert (core, version, proto) == ("1", str(lazyvi_plugin.PROTOCOL_VERSION), "grpc")
        target = "unix:" + addr if network == "unix" else addr
        with grpc.insecure_channel(target) as ch:
            yield backend_pb2_grpc.BackendStub(ch), health_pb2_grpc.HealthStub(ch)


X = np.array([[1.0, 5.0], [2.0, 6.0], [3.0, 7.0]])
Y = np.array([2.0, 4.0, 6.0])


def fitted(stub):
    ref = stub.NewModel(pb.NewModelRequest(task=0, inputs=2, seed=1))
    f = stub.Fit(pb.FitRequest(model_id=ref.model_id, x=codec.matrix_pb(X), y=codec.vector_pb(Y)))
    assert f.num_params == 1 and f.report.architecture == "scale"
    return ref.model_id


def test_describe_and_health(stub):
    b, health = stub
    d = b.Describe(pb.DescribeRequest())
    assert d.capabilities.gradients and d.capabilities.kernel and not d.capabilities.persist
    assert [(o.name, o.default_value) for o in d.options] == [("unused", "1")]
    assert health.Check(health_pb2.HealthCheckRequest(service="plugin")).status == health_pb2.HealthCheckResponse.SERVING


def test_fit_predict_and_derived_products(stub):
    b, _ = stub
    mid = fitted(b)
    assert codec.array(b.Predict(pb.PredictRequest(model_id=mid, x=codec.matrix_pb(X))), "p").ravel().tolist() == [2, 4, 6]
    j = X[:, :1]
    k = codec.array(b.Kernel(pb.KernelRequest(model_id=mid, x1=codec.matrix_pb(X), allow_upper=True)), "k")
    assert np.array_equal(k, j @ j.T)
    v = np.array([[1.0, -2.0]])
    jv = b.JacobianProduct(pb.JacobianProductRequest(model_id=mid, x=codec.matrix_pb(X), v=codec.matrix_pb(v)))
    assert np.array_equal(codec.array(jv, "jv"), j @ v)
    g = b.Gram(pb.GramRequest(model_id=mid, x=codec.matrix_pb(X), e=codec.vector_pb(Y)))
    assert codec.array(g.g, "g").tolist() == [[14.0]] and codec.vector(g.b, "b").tolist() == [28.0]
    shifts = b.PredictShifts(pb.PredictShiftsRequest(model_id=mid, shifts=[
        pb.Shift(x=codec.matrix_pb(X), dtheta=codec.vector_pb([1.0])),
        pb.Shift(x=codec.matrix_pb(X), x_train=codec.matrix_pb(X[:1]), a=codec.vector_pb([0.5])),
    ]))
    assert [codec.array(p, "p").ravel().tolist() for p in shifts.preds] == [[3, 6, 9], [2.5, 5, 7.5]]


def test_kept_matrices(stub):
    b, _ = stub
    mid = fitted(b)
    m = codec.matrix_pb(X)
    m.handle = 7
    b.Predict(pb.PredictRequest(model_id=mid, x=m))
    ref = pb.Matrix(rows=3, cols=2, handle=7)
    assert codec.array(b.Predict(pb.PredictRequest(model_id=mid, x=ref)), "p").ravel().tolist() == [2, 4, 6]
    with pytest.raises(grpc.RpcError) as e:
        b.Predict(pb.PredictRequest(model_id=mid, x=pb.Matrix(rows=2, cols=2, handle=7)))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "is 3 x 2" in e.value.details()
    b.Release(pb.ReleaseRequest(matrix_handles=[7]))
    with pytest.raises(grpc.RpcError) as e:
        b.Predict(pb.PredictRequest(model_id=mid, x=ref))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "no matrix kept under handle 7" in e.value.details()


@pytest.mark.parametrize("call, code, text", [
    (lambda b, mid: b.NewModel(pb.NewModelRequest(task=0, inputs=2, options={"hiden": "1"})),
     grpc.StatusCode.INVALID_ARGUMENT, "scale: unknown option hiden"),
    (lambda b, mid: b.Save(pb.ModelRef(model_id=mid)), grpc.StatusCode.UNIMPLEMENTED, "scale: Save"),
    (lambda b, mid: b.Predict(pb.PredictRequest(model_id=mid + 1000, x=codec.matrix_pb(X))),
     grpc.StatusCode.NOT_FOUND, "no model"),
    (lambda b, mid: b.Predict(pb.PredictRequest(model_id=mid, x=pb.Matrix(rows=1, cols=1, data=b"\0"))),
     grpc.StatusCode.INVALID_ARGUMENT, "not whole float64s"),
    (lambda b, mid: b.Predict(pb.PredictRequest(model_id=b.NewModel(pb.NewModelRequest(task=0, inputs=2)).model_id,
                                                x=codec.matrix_pb(X))),
     grpc.StatusCode.UNKNOWN, "not fitted"),
])
def test_errors(stub, call, code, text):
    b, _ = stub
    mid = fitted(b)
    with pytest.raises(grpc.RpcError) as e:
        call(b, mid)
    assert e.value.code() == code and text in e.value.details()


def test_released_model(stub):
    b, _ = stub
    mid = fitted(b)
    b.Release(pb.ReleaseRequest(model_ids=[mid]))
    with pytest.raises(grpc.RpcError) as e:
        b.Predict(pb.PredictRequest(model_id=mid, x=codec.matrix_pb(X)))
    assert e.value.code() == grpc.StatusCode.NOT_FOUND


def test_server_stop_removes_its_socket():
    s = lazyvi_plugin.Server(ScaleBackend())
    network, addr = s.handshake.split("|")[2:4]
    s.stop()
    if network == "unix":
        assert not os.path.exists(os.path.dirname(addr))


def test_plugin_refuses_to_run_by_hand():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=here)
    env.pop(lazyvi_plugin.server.COOKIE_KEY, None)
    p = subprocess.run([sys.executable, os.path.join(here, "examples", "numpy_linear.py")], env=env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and p.stdout == "" and "This binary is a plugin" in p.stderr
    assert "vi estimate --plugin numpy_linear.py" in p.stderr


class Recording(Scale):
    """Scale, recording the keyword arguments of its product calls."""

    def __init__(self, calls):
        super().__init__()
        self.calls = calls

    def predict(self, x, **kw):
        self.calls.append(("predict", kw))
        return super().predict(x)

    def jacobian_mul(self, x, v, **kw):
        self.calls.append(("mul", kw))
        return super().jacobian_mul(x, v)

    def jacobian_tmul(self, x, u, **kw):
        self.calls.append(("tmul", kw))
        return super().jacobian_tmul(x, u)

    def jacobian_tvec(self, x, a, **kw):
        self.calls.append(("tvec", kw))
        return super().jacobian_tvec(x, a)

    def kernel(self, x1, x2, **kw):
        self.calls.append(("kernel", kw))
        return super().kernel(x1, x2)

    def predict_shifts(self, shifts, **kw):
        self.calls.append(("shifts", kw))
        return [self.predict_shifted(x, Scale.jacobian_tvec(self, xt, a)) for x, _, xt, a in shifts]


def test_single_precision_where_declared():
    # single=True reaches a model only where its call asks for single
    # precision and the backend declares it (single_precision for the
    # products, single_kernel for the kernel, J^T a and the shifts); a
    # model that does not declare it is called as before.
    single = pb.CallOptions(precision=pb.SINGLE)
    for prec, kern in [(True, False), (False, True), (False, False)]:
        calls = []

        class Backend(ScaleBackend):
            capabilities = lazyvi_plugin.Capabilities(gradients=True, kernel=True, matrix_free=True,
                                                      single_precision=prec, single_kernel=kern)

            def new_model(self, spec):
                return Recording(calls)

        with lazyvi_plugin.Server(Backend()) as s:
            network, addr = s.handshake.split("|")[2:4]
            with grpc.insecure_channel("unix:" + addr if network == "unix" else addr) as ch:
                b = backend_pb2_grpc.BackendStub(ch)
                caps = b.Describe(pb.DescribeRequest()).capabilities
                assert (caps.single_precision, caps.single_kernel) == (prec, kern)
                mid = fitted(b)
                x, v, u = codec.matrix_pb(X), codec.matrix_pb(np.array([[1.0]])), codec.matrix_pb(np.ones((3, 1)))
                for opts in [single, None]:
                    b.Predict(pb.PredictRequest(model_id=mid, x=x, prepared=True, options=opts))
                    b.Predict(pb.PredictRequest(model_id=mid, x=x, options=opts))
                    b.JacobianProduct(pb.JacobianProductRequest(model_id=mid, x=x, v=v, options=opts))
                    b.JacobianProduct(pb.JacobianProductRequest(model_id=mid, x=x, v=u, transpose=True, options=opts))
                    b.JacobianTVec(pb.JacobianTVecRequest(model_id=mid, x=x, a=codec.vector_pb(Y), options=opts))
                    b.Kernel(pb.KernelRequest(model_id=mid, x1=x, options=opts))
                    b.PredictShifts(pb.PredictShiftsRequest(model_id=mid, options=opts, shifts=[
                        pb.Shift(x=x, x_train=x, a=codec.vector_pb(Y))]))
        on = {"single": True}
        # Only a prepared prediction may be single.
        assert calls[:7] == [("predict", on if prec else {}), ("predict", {}), ("mul", on if prec else {}),
                             ("tmul", on if prec else {}), ("tvec", on if kern else {}),
                             ("kernel", on if kern else {}), ("shifts", on if kern else {})]
        assert all(kw == {} for _, kw in calls[7:]) and len(calls) == 14
