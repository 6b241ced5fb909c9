package backendplugin

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
	pb "github.com/lazyvi/lazyvi/proto/lazyvi/backend/v2"
)

// model is a framework.Model living in the plugin process. It has the
// methods of every optional interface and is framework.Capable: its
// backend's capabilities say which of them work (framework.As[Gradienter]
// and its kin consult them). A method the plugin's model does not have
// fails with the plugin's answer (Unimplemented).
type model struct {
	r  *remote
	c  *conn
	id uint64
	// numParams is M and report the plugin's account of training, both
	// set once the model is fitted (Fit, Load, or WarmStart's answer).
	numParams atomic.Int64
	report    framework.FitReport

	closeOnce sync.Once
	closeErr  error
}

// Capabilities returns the backend's: what this model can do.
func (m *model) Capabilities() framework.Capabilities { return m.r.caps }

// call runs an RPC on the matrix arguments xs (packed by withArgs) under
// the connection's watchdog, then releases the matrices the client no
// longer keeps.
func call[R any](ctx context.Context, m *model, op string, xs []mat.Matrix, f func(ctx context.Context, ms []*pb.Matrix) (R, error)) (R, error) {
	var out R
	err := m.c.do(ctx, op, func(ctx context.Context) error {
		return m.c.withArgs(xs, func(ms []*pb.Matrix) (err error) {
			out, err = f(ctx, ms)
			return err
		})
	})
	m.c.flushReleases()
	return out, err
}

// matrix runs an RPC on the matrix arguments xs that returns a matrix.
func (m *model) matrix(ctx context.Context, op string, xs []mat.Matrix, f func(ctx context.Context, ms []*pb.Matrix) (*pb.Matrix, error)) (*mat.Dense, error) {
	out, err := call(ctx, m, op, xs, f)
	if err != nil {
		return nil, err
	}
	d, err := fromPB(out)
	if err != nil {
		return nil, &Error{Backend: m.c.name, Op: op, Err: err}
	}
	return d, nil
}

// fitted runs an RPC that leaves a fitted model and keeps what it says.
func (m *model) fitted(ctx context.Context, op string, f func(ctx context.Context) (*pb.Fitted, error)) (*pb.Fitted, error) {
	var out *pb.Fitted
	err := m.c.do(ctx, op, func(ctx context.Context) (err error) {
		out, err = f(ctx)
		return err
	})
	return out, err
}

// setFitted keeps what the plugin said of a fitted model.
func (m *model) setFitted(f *pb.Fitted) {
	m.numParams.Store(f.GetNumParams())
	if r := f.GetReport(); r != nil {
		m.report = framework.FitReport{Epochs: int(r.Epochs), StoppedBy: r.StoppedBy,
			ValidRows: int(r.ValidRows), ValidLoss: r.ValidLoss, Loaded: r.Loaded, Architecture: r.Architecture}
	}
}

func (m *model) Fit(ctx context.Context, x mat.Matrix, y []float64) error {
	f, err := m.fitted(ctx, "Fit", func(ctx context.Context) (*pb.Fitted, error) {
		return m.c.rpc.Fit(ctx, &pb.FitRequest{ModelId: m.id, X: requestPB(x), Y: vec(y)})
	})
	if err == nil {
		m.setFitted(f)
	}
	return err
}

// FitReport implements framework.FitReporter with what the plugin said
// once the model was fitted: the zero FitReport from a plugin that does
// not report.
func (m *model) FitReport() framework.FitReport { return m.report }

func (m *model) Predict(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	return m.predict(ctx, "Predict", x, false, false)
}

// PredictPrepared asks the plugin for framework.PreparedPredictor's
// predictions: a plugin whose model is one keeps what its Jacobian
// products on x need; any other predicts as usual (the same predictions),
// so the remote model offers it whenever it has Jacobian products.
func (m *model) PredictPrepared(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	return m.predict(ctx, "PredictPrepared", x, true, false)
}

// predict asks for predictions on x: prepared for PreparedPredictor's, and
// with single those of the model's single-precision pass.
func (m *model) predict(ctx context.Context, op string, x mat.Matrix, prepared, single bool) (*mat.Dense, error) {
	return m.matrix(ctx, op, []mat.Matrix{x}, func(ctx context.Context, ms []*pb.Matrix) (*pb.Matrix, error) {
		return m.c.rpc.Predict(ctx, &pb.PredictRequest{ModelId: m.id, X: ms[0], Prepared: prepared, Options: callOptions(single)})
	})
}

// Forget implements framework.Forgetter: the client drops the handles of
// the matrices it sent from the storage of xs (each of them, and its views)
// and releases them at once, and the plugin's server, releasing a kept
// matrix, tells its models that are Forgetters to forget it too (a
// network's memo drops its signals). Matrices the client kept no handle
// for (too small, or dropped already) need nothing.
func (m *model) Forget(xs ...mat.Matrix) {
	spans := make([]span, len(xs))
	for i, x := range xs {
		spans[i] = spanOf(x)
	}
	m.c.release(m.c.handles.dropWithin(spans))
}

// Close releases the model in the plugin process; framework.Release calls
// it. Closing twice, or after the plugin process is gone, returns nil. A
// plugin that does not answer within releaseGrace (or the hang timeout,
// if shorter) is given up on as the watchdog would: the connection fails
// every call at once from then on and the process is killed, so that
// releasing a run's models after an interrupt takes one grace, not the
// hang timeout per model.
func (m *model) Close() error {
	m.closeOnce.Do(func() {
		grace := releaseGrace
		if m.c.hangTimeout > 0 {
			grace = min(grace, m.c.hangTimeout)
		}
		ctx, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		err := m.c.do(ctx, "Release", func(ctx context.Context) error {
			_, err := m.c.rpc.Release(ctx, &pb.ReleaseRequest{ModelIds: []uint64{m.id}})
			return err
		})
		if err != nil && ctx.Err() != nil {
			m.c.giveUp(fmt.Errorf("%w (no answer to Release for %v)", ErrNotResponding, grace))
			return
		}
		if err != nil && !isFatal(err) {
			m.closeErr = err
		}
	})
	return m.closeErr
}

// NumParams returns M as the plugin said when the model was fitted; 0
// before.
func (m *model) NumParams() int { return int(m.numParams.Load()) }

func (m *model) Jacobian(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	return m.matrix(ctx, "Jacobian", []mat.Matrix{x}, func(ctx context.Context, ms []*pb.Matrix) (*pb.Matrix, error) {
		return m.c.rpc.Jacobian(ctx, &pb.JacobianRequest{ModelId: m.id, X: ms[0]})
	})
}

// PredictShifted is a batch of one shift.
func (m *model) PredictShifted(ctx context.Context, x mat.Matrix, dtheta []float64) (*mat.Dense, error) {
	out, err := m.predictShifts(ctx, "PredictShifted", []framework.Shift{{X: x, DTheta: dtheta}}, false)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// Gram implements framework.GramBuilder: G's upper triangle and b in one round
// trip, G in the memory its reply was read into (dst is not used).
func (m *model) Gram(ctx context.Context, x mat.Matrix, e []float64, _ []float64) (*mat.SymDense, []float64, error) {
	out, err := call(ctx, m, "Gram", []mat.Matrix{x}, func(ctx context.Context, ms []*pb.Matrix) (*gramReply, error) {
		reply := &gramReply{r: new(pb.GramResponse)}
		// The codec named here, whatever the connection's default, is the
		// one that knows gramReply.
		err := m.c.cc.Invoke(ctx, pb.Backend_Gram_FullMethodName, &pb.GramRequest{ModelId: m.id, X: ms[0], E: vec(e)}, reply, clientCodecOptions()...)
		return reply, err
	})
	if err != nil {
		return nil, nil, err
	}
	g := out.g
	if g == nil {
		if g, err = symFromPB(out.r.G); err != nil {
			return nil, nil, &Error{Backend: m.c.name, Op: "Gram", Err: err}
		}
	}
	b, err := vecOf(out.r.B)
	if err != nil {
		return nil, nil, &Error{Backend: m.c.name, Op: "Gram", Err: err}
	}
	return g, b, nil
}

// PredictShifts implements framework.ShiftBatcher: one round trip for the
// shifts of each precision (the dual form's Phi^T a formed in the plugin).
func (m *model) PredictShifts(ctx context.Context, shifts []framework.Shift) ([]*mat.Dense, error) {
	var single, double []int
	for i, s := range shifts {
		if s.Single && m.r.caps.SingleKernel {
			single = append(single, i)
		} else {
			double = append(double, i)
		}
	}
	if len(single) == 0 || len(double) == 0 {
		return m.predictShifts(ctx, "PredictShifts", shifts, len(single) > 0)
	}
	out := make([]*mat.Dense, len(shifts))
	for _, group := range []struct {
		idx    []int
		single bool
	}{{double, false}, {single, true}} {
		sub := make([]framework.Shift, len(group.idx))
		for j, i := range group.idx {
			sub[j] = shifts[i]
		}
		preds, err := m.predictShifts(ctx, "PredictShifts", sub, group.single)
		if err != nil {
			return nil, err
		}
		for j, i := range group.idx {
			out[i] = preds[j]
		}
	}
	return out, nil
}

func (m *model) predictShifts(ctx context.Context, op string, shifts []framework.Shift, single bool) ([]*mat.Dense, error) {
	xs := make([]mat.Matrix, 0, 2*len(shifts))
	for _, s := range shifts {
		xs = append(xs, s.X, s.XTrain)
	}
	out, err := call(ctx, m, op, xs, func(ctx context.Context, ms []*pb.Matrix) (*pb.PredictShiftsResponse, error) {
		req := &pb.PredictShiftsRequest{ModelId: m.id, Shifts: make([]*pb.Shift, len(shifts)), Options: callOptions(single)}
		for i, s := range shifts {
			req.Shifts[i] = &pb.Shift{X: ms[2*i], Dtheta: vec(s.DTheta), XTrain: ms[2*i+1]}
			if s.XTrain != nil {
				req.Shifts[i].A = vec(s.A)
			}
		}
		return m.c.rpc.PredictShifts(ctx, req)
	})
	if err != nil {
		return nil, err
	}
	if len(out.Preds) != len(shifts) {
		return nil, &Error{Backend: m.c.name, Op: op, Err: fmt.Errorf("%d predictions for %d shifts", len(out.Preds), len(shifts))}
	}
	preds := make([]*mat.Dense, len(shifts))
	for i, p := range out.Preds {
		if preds[i], err = fromPB(p); err != nil {
			return nil, &Error{Backend: m.c.name, Op: op, Err: err}
		}
	}
	return preds, nil
}

// callOptions asks for single precision or double.
func callOptions(single bool) *pb.CallOptions {
	if single {
		return &pb.CallOptions{Precision: pb.Precision_SINGLE}
	}
	return nil
}

func (m *model) Kernel(ctx context.Context, x1, x2 mat.Matrix) (*mat.Dense, error) {
	return m.kernel(ctx, x1, x2, false)
}

// KernelInto implements framework.InPlaceKerneler: the reply's values are
// read from gRPC's frames straight into dst when it holds them.
func (m *model) KernelInto(ctx context.Context, x1, x2 mat.Matrix, dst []float64) (*mat.Dense, error) {
	return m.kernelInto(ctx, x1, x2, false, dst)
}

func (m *model) kernel(ctx context.Context, x1, x2 mat.Matrix, single bool) (*mat.Dense, error) {
	return m.kernelInto(ctx, x1, x2, single, nil)
}

func (m *model) kernelInto(ctx context.Context, x1, x2 mat.Matrix, single bool, dst []float64) (*mat.Dense, error) {
	return m.matrix(ctx, "Kernel", []mat.Matrix{x1, x2}, func(ctx context.Context, ms []*pb.Matrix) (*pb.Matrix, error) {
		req := &pb.KernelRequest{ModelId: m.id, X1: ms[0], X2: ms[1], AllowUpper: x2 == nil, Options: callOptions(single)}
		if dst == nil {
			return m.c.rpc.Kernel(ctx, req)
		}
		out := new(pb.Matrix)
		// The codec named here, whatever the connection's default, is the
		// one that knows matrixInto.
		if err := m.c.cc.Invoke(ctx, pb.Backend_Kernel_FullMethodName, req, &matrixInto{m: out, dst: dst}, clientCodecOptions()...); err != nil {
			return nil, err
		}
		return out, nil
	})
}

func (m *model) JacobianTVec(ctx context.Context, x mat.Matrix, a []float64) ([]float64, error) {
	return m.jacobianTVec(ctx, x, a, false)
}

func (m *model) jacobianTVec(ctx context.Context, x mat.Matrix, a []float64, single bool) ([]float64, error) {
	out, err := call(ctx, m, "JacobianTVec", []mat.Matrix{x}, func(ctx context.Context, ms []*pb.Matrix) (*pb.Vector, error) {
		return m.c.rpc.JacobianTVec(ctx, &pb.JacobianTVecRequest{ModelId: m.id, X: ms[0], A: vec(a), Options: callOptions(single)})
	})
	if err != nil {
		return nil, err
	}
	v, err := vecOf(out)
	if err != nil {
		return nil, &Error{Backend: m.c.name, Op: "JacobianTVec", Err: err}
	}
	return v, nil
}

// SingleKernel implements framework.SingleKerneler for a plugin whose
// backend declares SingleKernel (Capabilities): its kernel and transposed
// product ask the plugin for the model's single-precision ones.
func (m *model) SingleKernel() framework.Kerneler { return singleKernelModel{m} }

// singleKernelModel is a remote model's single-precision Kerneler.
type singleKernelModel struct{ m *model }

func (s singleKernelModel) Kernel(ctx context.Context, x1, x2 mat.Matrix) (*mat.Dense, error) {
	return s.m.kernel(ctx, x1, x2, true)
}

// KernelInto implements framework.InPlaceKerneler (see model.KernelInto).
func (s singleKernelModel) KernelInto(ctx context.Context, x1, x2 mat.Matrix, dst []float64) (*mat.Dense, error) {
	return s.m.kernelInto(ctx, x1, x2, true, dst)
}

func (s singleKernelModel) JacobianTVec(ctx context.Context, x mat.Matrix, a []float64) ([]float64, error) {
	return s.m.jacobianTVec(ctx, x, a, true)
}

// JacobianMul implements framework.JacobianMultiplier: one round trip for
// all the columns of v.
func (m *model) JacobianMul(ctx context.Context, x mat.Matrix, v *mat.Dense) (*mat.Dense, error) {
	return m.jacobianProduct(ctx, "JacobianMul", x, v, false, false)
}

// JacobianTMul implements framework.JacobianMultiplier, as JacobianMul.
func (m *model) JacobianTMul(ctx context.Context, x mat.Matrix, u *mat.Dense) (*mat.Dense, error) {
	return m.jacobianProduct(ctx, "JacobianTMul", x, u, true, false)
}

// SinglePrecision implements framework.SinglePrecisioner for a plugin
// whose backend declares SinglePrecision (Capabilities): its products
// ask the plugin for the model's single-precision ones.
func (m *model) SinglePrecision() framework.JacobianMultiplier { return singleModel{m} }

// singleModel is a remote model's single-precision products, and a
// framework.PreparedPredictor whose predictions are those of the plugin
// model's single-precision pass (the lazy estimator's residuals at single
// precision): a plugin whose model has no such pass predicts in float64.
type singleModel struct{ m *model }

func (s singleModel) PredictPrepared(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	return s.m.predict(ctx, "PredictPrepared", x, true, true)
}

func (s singleModel) JacobianMul(ctx context.Context, x mat.Matrix, v *mat.Dense) (*mat.Dense, error) {
	return s.m.jacobianProduct(ctx, "JacobianMul", x, v, false, true)
}

func (s singleModel) JacobianTMul(ctx context.Context, x mat.Matrix, u *mat.Dense) (*mat.Dense, error) {
	return s.m.jacobianProduct(ctx, "JacobianTMul", x, u, true, true)
}

func (m *model) jacobianProduct(ctx context.Context, op string, x mat.Matrix, v *mat.Dense, trans, single bool) (*mat.Dense, error) {
	return m.matrix(ctx, op, []mat.Matrix{x}, func(ctx context.Context, ms []*pb.Matrix) (*pb.Matrix, error) {
		return m.c.rpc.JacobianProduct(ctx, &pb.JacobianProductRequest{ModelId: m.id, X: ms[0], V: toPB(v),
			Transpose: trans, Options: callOptions(single)})
	})
}

// WarmStart implements framework.WarmStarter: the new model lives in the
// plugin process next to the receiver.
func (m *model) WarmStart(ctx context.Context, x mat.Matrix, y []float64, steps int, seed int64) (framework.Model, error) {
	f, err := m.fitted(ctx, "WarmStart", func(ctx context.Context) (*pb.Fitted, error) {
		return m.c.rpc.WarmStart(ctx, &pb.WarmStartRequest{ModelId: m.id, X: requestPB(x), Y: vec(y), Steps: int64(steps), Seed: seed})
	})
	if err != nil {
		return nil, err
	}
	nm := &model{r: m.r, c: m.c, id: f.ModelId}
	nm.setFitted(f)
	return nm, nil
}

// WarmStartStopped implements framework.WarmStopper: the new model lives
// in the plugin process next to the receiver.
func (m *model) WarmStartStopped(ctx context.Context, x mat.Matrix, y []float64, maxEpochs int, seed int64) (framework.Model, error) {
	f, err := m.fitted(ctx, "WarmStartStopped", func(ctx context.Context) (*pb.Fitted, error) {
		return m.c.rpc.WarmStartStopped(ctx, &pb.WarmStartStoppedRequest{ModelId: m.id, X: requestPB(x), Y: vec(y), MaxEpochs: int64(maxEpochs), Seed: seed})
	})
	if err != nil {
		return nil, err
	}
	nm := &model{r: m.r, c: m.c, id: f.ModelId}
	nm.setFitted(f)
	return nm, nil
}

// SaveState implements framework.Persister: the state as the plugin's
// model encodes it.
func (m *model) SaveState(ctx context.Context) ([]byte, error) {
	var st *pb.ModelState
	err := m.c.do(ctx, "Save", func(ctx context.Context) (err error) {
		st, err = m.c.rpc.Save(ctx, &pb.ModelRef{ModelId: m.id})
		return err
	})
	if err != nil {
		return nil, err
	}
	return st.State, nil
}

// LoadState implements framework.Persister: the plugin's model loads the
// state and is then fitted.
func (m *model) LoadState(ctx context.Context, state []byte) error {
	f, err := m.fitted(ctx, "Load", func(ctx context.Context) (*pb.Fitted, error) {
		return m.c.rpc.Load(ctx, &pb.ModelState{ModelId: m.id, State: state})
	})
	if err == nil {
		m.setFitted(f)
	}
	return err
}

var (
	_ framework.Persister    = (*model)(nil)
	_ framework.Capable      = (*model)(nil)
	_ framework.Gradienter   = (*model)(nil)
	_ framework.Kerneler     = (*model)(nil)
	_ framework.GramBuilder  = (*model)(nil)
	_ framework.ShiftBatcher = (*model)(nil)
	_ framework.WarmStarter  = (*model)(nil)
	_ framework.WarmStopper  = (*model)(nil)

	_ framework.JacobianMultiplier = (*model)(nil)
	_ framework.PreparedPredictor  = singleModel{}
	_ framework.SinglePrecisioner  = (*model)(nil)
	_ framework.SingleKerneler     = (*model)(nil)
)
