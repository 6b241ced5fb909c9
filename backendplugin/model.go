package backendplugin

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/pb"
)

// model is a framework.Model living in the plugin process. It has the
// methods of every optional interface and is framework.Capable: its
// backend's capabilities say which of them work (framework.AsGradienter
// and its kin consult them). A method the plugin's model does not have
// fails with the plugin's answer (Unimplemented).
type model struct {
	r  *remote
	c  *conn
	id uint64
	// numParams is M, fetched when the model is fitted (models with
	// gradients only).
	numParams atomic.Int64
	// report is the plugin's account of Fit (zero when it gave none).
	report framework.FitReport

	closeOnce sync.Once
	closeErr  error
}

// Capabilities returns the backend's: what this model can do.
func (m *model) Capabilities() framework.Capabilities { return m.r.caps }

// call runs an RPC on the matrix arguments xs (packed by withArgs) under
// the connection's watchdog.
func call[R any](ctx context.Context, m *model, op string, xs []mat.Matrix, f func(ctx context.Context, ms []*pb.Matrix) (R, error)) (R, error) {
	var out R
	err := m.c.do(ctx, op, func(ctx context.Context) error {
		return m.c.withArgs(xs, func(ms []*pb.Matrix) (err error) {
			out, err = f(ctx, ms)
			return err
		})
	})
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

func (m *model) Fit(ctx context.Context, x mat.Matrix, y []float64) error {
	err := m.c.do(ctx, "Fit", func(ctx context.Context) error {
		resp, err := m.c.rpc.Fit(ctx, &pb.FitRequest{ModelId: m.id, X: requestPB(x), Y: vec(y)})
		m.setReport(resp, err)
		return err
	})
	if err != nil {
		return err
	}
	return m.fetchNumParams(ctx)
}

// setReport keeps what the plugin said of a fitted model's training.
func (m *model) setReport(resp *pb.FitResponse, err error) {
	if err == nil && resp.GetReported() {
		m.report = framework.FitReport{Epochs: int(resp.GetEpochs()), StoppedBy: resp.GetStoppedBy(),
			ValidRows: int(resp.GetValidRows()), ValidLoss: resp.GetValidLoss()}
	}
}

// FitReport implements framework.FitReporter with what the plugin said
// after Fit: the zero FitReport from a plugin that does not report.
func (m *model) FitReport() framework.FitReport { return m.report }

// fetchNumParams asks a fitted model with gradients for M: here, where a
// failure can be reported, rather than in NumParams, which cannot.
func (m *model) fetchNumParams(ctx context.Context) error {
	if !m.r.caps.Gradients {
		return nil
	}
	return m.c.do(ctx, "NumParams", func(ctx context.Context) error {
		resp, err := m.c.rpc.NumParams(ctx, &pb.ModelRef{ModelId: m.id})
		if err == nil {
			m.numParams.Store(int64(resp.NumParams))
		}
		return err
	})
}

func (m *model) Predict(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	return m.predict(ctx, "Predict", x, false)
}

// PredictPrepared asks the plugin for framework.PreparedPredictor's
// predictions: a plugin whose model is one keeps what its Jacobian
// products on x need; any other predicts as usual (the same predictions),
// so the remote model offers it whenever it has Jacobian products.
func (m *model) PredictPrepared(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	return m.predict(ctx, "PredictPrepared", x, true)
}

func (m *model) predict(ctx context.Context, op string, x mat.Matrix, prepared bool) (*mat.Dense, error) {
	return m.matrix(ctx, op, []mat.Matrix{x}, func(ctx context.Context, ms []*pb.Matrix) (*pb.Matrix, error) {
		return m.c.rpc.Predict(ctx, &pb.MatrixRequest{ModelId: m.id, X: ms[0], Prepared: prepared})
	})
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
			_, err := m.c.rpc.Release(ctx, &pb.ModelRef{ModelId: m.id})
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

// NumParams returns M as Fit fetched it (the interface leaves no room for an
// error, so Fit reports a failure to get it); 0 before Fit.
func (m *model) NumParams() int { return int(m.numParams.Load()) }

func (m *model) Jacobian(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	return m.matrix(ctx, "Jacobian", []mat.Matrix{x}, func(ctx context.Context, ms []*pb.Matrix) (*pb.Matrix, error) {
		return m.c.rpc.Jacobian(ctx, &pb.MatrixRequest{ModelId: m.id, X: ms[0]})
	})
}

func (m *model) PredictShifted(ctx context.Context, x mat.Matrix, dtheta []float64) (*mat.Dense, error) {
	return m.matrix(ctx, "PredictShifted", []mat.Matrix{x}, func(ctx context.Context, ms []*pb.Matrix) (*pb.Matrix, error) {
		return m.c.rpc.PredictShifted(ctx, &pb.PredictShiftedRequest{ModelId: m.id, X: ms[0], Dtheta: vec(dtheta)})
	})
}

// Gram implements framework.Grammer: one round trip carrying G's upper
// triangle and b when the plugin serves it, else from the Jacobian.
func (m *model) Gram(ctx context.Context, x mat.Matrix, e []float64) (*mat.SymDense, []float64, error) {
	if !m.r.gram {
		return framework.JacobianGram(ctx, m, x, e)
	}
	out, err := call(ctx, m, "Gram", []mat.Matrix{x}, func(ctx context.Context, ms []*pb.Matrix) (*pb.GramResponse, error) {
		return m.c.rpc.Gram(ctx, &pb.GramRequest{ModelId: m.id, X: ms[0], E: vec(e)})
	})
	if err != nil {
		return nil, nil, err
	}
	g, err := unpackUpper(int(out.N), out.Upper)
	if err != nil {
		return nil, nil, &Error{Backend: m.c.name, Op: "Gram", Err: err}
	}
	return g, out.GetB().GetData(), nil
}

// PredictShifts implements framework.ShiftBatcher: one round trip for all
// the shifts when the plugin serves it (their matrices keyed as usual), else
// one call per shift (two in the dual form), concurrently.
func (m *model) PredictShifts(ctx context.Context, shifts []framework.Shift) ([]*mat.Dense, error) {
	if !m.r.shiftBatch {
		return framework.PredictShiftsEach(ctx, m, shifts)
	}
	xs := make([]mat.Matrix, 0, 2*len(shifts))
	for _, s := range shifts {
		xs = append(xs, s.X, s.XTrain)
	}
	out, err := call(ctx, m, "PredictShifts", xs, func(ctx context.Context, ms []*pb.Matrix) (*pb.PredictShiftsResponse, error) {
		req := &pb.PredictShiftsRequest{ModelId: m.id, Shifts: make([]*pb.Shift, len(shifts))}
		for i, s := range shifts {
			req.Shifts[i] = &pb.Shift{X: ms[2*i], Dtheta: vec(s.DTheta), XTrain: ms[2*i+1], A: vec(s.A), Single: s.Single && m.r.caps.SingleKernel}
		}
		return m.c.rpc.PredictShifts(ctx, req)
	})
	if err != nil {
		return nil, err
	}
	if len(out.Preds) != len(shifts) {
		return nil, &Error{Backend: m.c.name, Op: "PredictShifts", Err: fmt.Errorf("%d predictions for %d shifts", len(out.Preds), len(shifts))}
	}
	preds := make([]*mat.Dense, len(shifts))
	for i, p := range out.Preds {
		if preds[i], err = fromPB(p); err != nil {
			return nil, &Error{Backend: m.c.name, Op: "PredictShifts", Err: err}
		}
	}
	return preds, nil
}

func (m *model) Kernel(ctx context.Context, x1, x2 mat.Matrix) (*mat.Dense, error) {
	return m.kernel(ctx, x1, x2, false)
}

func (m *model) kernel(ctx context.Context, x1, x2 mat.Matrix, single bool) (*mat.Dense, error) {
	return m.matrix(ctx, "Kernel", []mat.Matrix{x1, x2}, func(ctx context.Context, ms []*pb.Matrix) (*pb.Matrix, error) {
		return m.c.rpc.Kernel(ctx, &pb.KernelRequest{ModelId: m.id, X1: ms[0], X2: ms[1], AllowUpper: x2 == nil, Single: single})
	})
}

func (m *model) JacobianTVec(ctx context.Context, x mat.Matrix, a []float64) ([]float64, error) {
	return m.jacobianTVec(ctx, x, a, false)
}

func (m *model) jacobianTVec(ctx context.Context, x mat.Matrix, a []float64, single bool) ([]float64, error) {
	out, err := call(ctx, m, "JacobianTVec", []mat.Matrix{x}, func(ctx context.Context, ms []*pb.Matrix) (*pb.Vector, error) {
		return m.c.rpc.JacobianTVec(ctx, &pb.JacobianTVecRequest{ModelId: m.id, X: ms[0], A: vec(a), Single: single})
	})
	if err != nil {
		return nil, err
	}
	return out.GetData(), nil
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

func (s singleKernelModel) JacobianTVec(ctx context.Context, x mat.Matrix, a []float64) ([]float64, error) {
	return s.m.jacobianTVec(ctx, x, a, true)
}

// JacobianMul implements framework.JacobianMultiplier: one round trip for
// all the columns of v when the plugin serves it, else from the Jacobian.
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

// singleModel is a remote model's single-precision products.
type singleModel struct{ m *model }

func (s singleModel) JacobianMul(ctx context.Context, x mat.Matrix, v *mat.Dense) (*mat.Dense, error) {
	return s.m.jacobianProduct(ctx, "JacobianMul", x, v, false, true)
}

func (s singleModel) JacobianTMul(ctx context.Context, x mat.Matrix, u *mat.Dense) (*mat.Dense, error) {
	return s.m.jacobianProduct(ctx, "JacobianTMul", x, u, true, true)
}

func (m *model) jacobianProduct(ctx context.Context, op string, x mat.Matrix, v *mat.Dense, trans, single bool) (*mat.Dense, error) {
	if !m.r.jacProducts {
		return framework.JacobianProducts(ctx, m, x, v, trans)
	}
	return m.matrix(ctx, op, []mat.Matrix{x}, func(ctx context.Context, ms []*pb.Matrix) (*pb.Matrix, error) {
		req := &pb.JacobianProductRequest{ModelId: m.id, X: ms[0], V: toPB(v), Single: single}
		if trans {
			return m.c.rpc.JacobianTMul(ctx, req)
		}
		return m.c.rpc.JacobianMul(ctx, req)
	})
}

// WarmStart implements framework.WarmStarter: the new model lives in the
// plugin process next to the receiver.
func (m *model) WarmStart(ctx context.Context, x mat.Matrix, y []float64, steps int, seed int64) (framework.Model, error) {
	var ref *pb.ModelRef
	err := m.c.do(ctx, "WarmStart", func(ctx context.Context) (err error) {
		ref, err = m.c.rpc.WarmStart(ctx, &pb.WarmStartRequest{ModelId: m.id, X: requestPB(x), Y: vec(y), Steps: int64(steps), Seed: seed})
		return err
	})
	if err != nil {
		return nil, err
	}
	nm := &model{r: m.r, c: m.c, id: ref.ModelId}
	if err := nm.fetchNumParams(ctx); err != nil {
		_ = nm.Close()
		return nil, err
	}
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
// state and is then fitted (its fit report and M are fetched as after
// Fit).
func (m *model) LoadState(ctx context.Context, state []byte) error {
	err := m.c.do(ctx, "Load", func(ctx context.Context) error {
		resp, err := m.c.rpc.Load(ctx, &pb.ModelState{ModelId: m.id, State: state})
		m.setReport(resp, err)
		return err
	})
	if err != nil {
		return err
	}
	return m.fetchNumParams(ctx)
}

var (
	_ framework.Persister    = (*model)(nil)
	_ framework.Capable      = (*model)(nil)
	_ framework.Gradienter   = (*model)(nil)
	_ framework.Kerneler     = (*model)(nil)
	_ framework.Grammer      = (*model)(nil)
	_ framework.ShiftBatcher = (*model)(nil)
	_ framework.WarmStarter  = (*model)(nil)

	_ framework.JacobianMultiplier = (*model)(nil)
	_ framework.SinglePrecisioner  = (*model)(nil)
	_ framework.SingleKerneler     = (*model)(nil)
)
