package backendplugin

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-plugin"
	"gonum.org/v1/gonum/mat"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/pb"
)

// remote is the framework.Backend on lazyvi's side of a plugin. It owns the
// watchdog: while calls are in flight it pings the plugin's health service,
// and when no ping has succeeded for hangTimeout it fails them all with
// ErrNotResponding and kills the process.
type remote struct {
	name   string
	rpc    pb.BackendClient
	health grpc_health_v1.HealthClient
	caps   framework.Capabilities
	opts   []framework.OptionInfo
	// shiftBatch: the plugin serves PredictShifts; older plugins get one
	// call per shift. gram: the plugin serves Gram; older ones send the
	// Jacobian.
	shiftBatch bool
	gram       bool
	// known: the keys of the matrices the plugin's cache holds, as far as
	// this side knows; nil when the plugin has no matrix cache (then every
	// matrix is sent in full).
	known *knownKeys

	hangTimeout time.Duration // 0: no watchdog
	pingEvery   time.Duration
	exited      func() error // non-nil once the process has exited; nil in-process
	kill        func()       // kills the process; nil in-process

	mu       sync.Mutex
	calls    map[uint64]context.CancelCauseFunc
	nextCall uint64
	lastOK   time.Time // last sign of life: a ping answered, or the first call after idling
	broken   error     // sticky: ErrNotResponding or ErrClosed
	stop     chan struct{}
	stopped  chan struct{}
}

// newRemote asks the plugin behind conn for its capabilities and options and
// starts the watchdog.
func newRemote(ctx context.Context, name string, conn grpc.ClientConnInterface, o *options, exited func() error, kill func()) (*remote, error) {
	r := &remote{
		name:        name,
		rpc:         pb.NewBackendClient(conn),
		health:      grpc_health_v1.NewHealthClient(conn),
		hangTimeout: o.hangTimeout,
		exited:      exited,
		kill:        kill,
		calls:       make(map[uint64]context.CancelCauseFunc),
		stop:        make(chan struct{}),
		stopped:     make(chan struct{}),
	}
	if r.hangTimeout > 0 {
		r.pingEvery = min(max(r.hangTimeout/5, 10*time.Millisecond), 5*time.Second)
		go r.watch()
	} else {
		close(r.stopped)
	}
	var caps *pb.CapabilitiesResponse
	err := r.do(ctx, "Capabilities", func(ctx context.Context) (err error) {
		caps, err = r.rpc.Capabilities(ctx, &pb.Empty{})
		return err
	})
	if err != nil {
		r.shutdown()
		return nil, err
	}
	r.caps = framework.Capabilities{Gradients: caps.Gradients, Kernel: caps.Kernel, Classification: caps.Classification,
		Multiclass: caps.Multiclass, WarmStart: caps.WarmStart}
	if caps.MatrixCache {
		r.known = newKnownKeys()
	}
	r.shiftBatch = caps.ShiftBatch
	r.gram = caps.Gram
	var opts *pb.OptionsResponse
	err = r.do(ctx, "Options", func(ctx context.Context) (err error) {
		opts, err = r.rpc.Options(ctx, &pb.Empty{})
		return err
	})
	if err != nil {
		r.shutdown()
		return nil, err
	}
	for _, o := range opts.Options {
		r.opts = append(r.opts, framework.OptionInfo{Name: o.Name, Default: o.DefaultValue, Usage: o.Usage})
	}
	return r, nil
}

// shutdown fails the calls in flight with ErrClosed and stops the watchdog.
func (r *remote) shutdown() {
	r.mu.Lock()
	if r.broken == nil {
		r.broken = ErrClosed
	}
	for _, cancel := range r.calls {
		cancel(ErrClosed)
	}
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	r.mu.Unlock()
	<-r.stopped
}

func (r *remote) watch() {
	defer close(r.stopped)
	t := time.NewTicker(r.pingEvery)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
		r.mu.Lock()
		idle := len(r.calls) == 0 || r.broken != nil
		r.mu.Unlock()
		if idle {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), r.pingEvery)
		_, err := r.health.Check(ctx, &grpc_health_v1.HealthCheckRequest{Service: plugin.GRPCServiceName})
		cancel()
		if err != nil && r.exited != nil && r.exited() != nil {
			continue // the calls fail with the exit on their own
		}
		now := time.Now()
		hung := false
		r.mu.Lock()
		switch {
		case err == nil:
			r.lastOK = now
		case len(r.calls) > 0 && r.broken == nil && now.Sub(r.lastOK) >= r.hangTimeout:
			hung = true
			r.broken = fmt.Errorf("%w (no answer to health checks for %v)", ErrNotResponding, r.hangTimeout)
			for _, cancel := range r.calls {
				cancel(r.broken)
			}
		}
		r.mu.Unlock()
		if hung && r.kill != nil {
			r.kill()
		}
	}
}

// do runs one RPC under the watchdog and turns its error into an *Error.
func (r *remote) do(ctx context.Context, op string, f func(context.Context) error) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r.mu.Lock()
	err := r.broken
	if err == nil && r.exited != nil {
		err = r.exited()
	}
	if err != nil {
		r.mu.Unlock()
		return &Error{Backend: r.name, Op: op, Err: err}
	}
	if len(r.calls) == 0 {
		r.lastOK = time.Now()
	}
	r.nextCall++
	id := r.nextCall
	r.calls[id] = cancel
	r.mu.Unlock()

	err = f(ctx)

	r.mu.Lock()
	delete(r.calls, id)
	r.mu.Unlock()
	if err == nil {
		return nil
	}
	return &Error{Backend: r.name, Op: op, Err: r.translate(ctx, err)}
}

// translate turns a gRPC error into the error the caller sees.
func (r *remote) translate(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && isFatal(cause) {
		return cause
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	switch st.Code() {
	case codes.InvalidArgument:
		return &remoteError{msg: st.Message(), kind: framework.ErrUsage}
	case codes.Canceled:
		return &remoteError{msg: st.Message(), kind: context.Canceled}
	case codes.DeadlineExceeded:
		return &remoteError{msg: st.Message(), kind: context.DeadlineExceeded}
	case codes.Unavailable:
		if exit := r.waitExit(3 * time.Second); exit != nil {
			return exit
		}
		return fmt.Errorf("lost connection to plugin: %s", st.Message())
	}
	return &remoteError{msg: st.Message()}
}

// waitExit waits up to d for the process to be seen exited: the connection
// breaks a moment before go-plugin has reaped the process.
func (r *remote) waitExit(d time.Duration) error {
	if r.exited == nil {
		return nil
	}
	return waitExited(r.exited, d)
}

// waitExited waits up to d for exited to report the process's exit, and
// returns that (nil if it did not come).
func waitExited(exited func() error, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		if err := exited(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (r *remote) Capabilities() framework.Capabilities { return r.caps }

func (r *remote) Options() []framework.OptionInfo {
	return append([]framework.OptionInfo(nil), r.opts...)
}

// New creates the model in the plugin process. The client model's type
// matches the backend's capabilities: it implements framework.Gradienter only
// when the backend has gradients and framework.Kerneler only when it has
// kernels. Release it with framework.Release.
func (r *remote) New(spec framework.ModelSpec) (framework.Model, error) {
	var ref *pb.ModelRef
	err := r.do(context.Background(), "New", func(ctx context.Context) (err error) {
		ref, err = r.rpc.NewModel(ctx, &pb.NewModelRequest{
			Task:    int32(spec.Task),
			Inputs:  int64(spec.Inputs),
			Seed:    spec.Seed,
			Options: spec.Options,
			Classes: int64(spec.Classes),
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return r.client(ref.ModelId), nil
}

// client returns the client of the plugin's model id, of the type that the
// capabilities promise (framework.Gradienter, framework.Kerneler and
// framework.WarmStarter exactly when they say so).
func (r *remote) client(id uint64) framework.Model {
	m := &model{r: r, id: id, gradients: r.caps.Gradients}
	if r.caps.WarmStart {
		w := warmOps{m}
		switch {
		case r.caps.Gradients && r.caps.Kernel:
			return &warmGradKernelModel{gradModel{m}, kernelOps{m}, w}
		case r.caps.Gradients:
			return &warmGradModel{gradModel{m}, w}
		case r.caps.Kernel:
			return &warmKernelModel{m, kernelOps{m}, w}
		}
		return &warmModel{m, w}
	}
	switch {
	case r.caps.Gradients && r.caps.Kernel:
		return &gradKernelModel{gradModel{m}, kernelOps{m}}
	case r.caps.Gradients:
		return &gradModel{m}
	case r.caps.Kernel:
		return &kernelModel{m, kernelOps{m}}
	}
	return m
}

// model is a framework.Model living in the plugin process.
type model struct {
	r  *remote
	id uint64
	// gradients: the backend's models are Gradienters, so Fit also asks
	// for M and NumParams answers from numParams without a call.
	gradients bool
	numParams atomic.Int64

	closeOnce sync.Once
	closeErr  error
}

// matrix runs an RPC returning a matrix.
func (m *model) matrix(ctx context.Context, op string, f func(ctx context.Context) (*pb.Matrix, error)) (*mat.Dense, error) {
	var out *pb.Matrix
	err := m.r.do(ctx, op, func(ctx context.Context) (err error) {
		out, err = f(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	d, err := fromPB(out)
	if err != nil {
		return nil, &Error{Backend: m.r.name, Op: op, Err: err}
	}
	return d, nil
}

func (m *model) Fit(ctx context.Context, x mat.Matrix, y []float64) error {
	err := m.r.do(ctx, "Fit", func(ctx context.Context) error {
		_, err := m.r.rpc.Fit(ctx, &pb.FitRequest{ModelId: m.id, X: requestPB(x), Y: vec(y)})
		return err
	})
	if err != nil || !m.gradients {
		return err
	}
	// M is fixed once the model is fitted: fetch it here, where a failure
	// can be reported, rather than in NumParams, which cannot.
	return m.r.do(ctx, "NumParams", func(ctx context.Context) error {
		resp, err := m.r.rpc.NumParams(ctx, &pb.ModelRef{ModelId: m.id})
		if err == nil {
			m.numParams.Store(int64(resp.NumParams))
		}
		return err
	})
}

func (m *model) Predict(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	return m.matrix(ctx, "Predict", func(ctx context.Context) (out *pb.Matrix, err error) {
		err = m.r.withArgs([]mat.Matrix{x}, func(ms []*pb.Matrix) (err error) {
			out, err = m.r.rpc.Predict(ctx, &pb.MatrixRequest{ModelId: m.id, X: ms[0]})
			return err
		})
		return out, err
	})
}

// Close releases the model in the plugin process; framework.Release calls
// it. Closing twice, or after the plugin process is gone, returns nil.
func (m *model) Close() error {
	m.closeOnce.Do(func() {
		err := m.r.do(context.Background(), "Release", func(ctx context.Context) error {
			_, err := m.r.rpc.Release(ctx, &pb.ModelRef{ModelId: m.id})
			return err
		})
		if err != nil && !isFatal(err) {
			m.closeErr = err
		}
	})
	return m.closeErr
}

// gradModel is a remote framework.Gradienter.
type gradModel struct{ *model }

// NumParams returns M as Fit fetched it (the interface leaves no room for an
// error, so Fit reports a failure to get it); 0 before Fit.
func (m gradModel) NumParams() int { return int(m.numParams.Load()) }

func (m gradModel) Jacobian(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	return m.matrix(ctx, "Jacobian", func(ctx context.Context) (out *pb.Matrix, err error) {
		err = m.r.withArgs([]mat.Matrix{x}, func(ms []*pb.Matrix) (err error) {
			out, err = m.r.rpc.Jacobian(ctx, &pb.MatrixRequest{ModelId: m.id, X: ms[0]})
			return err
		})
		return out, err
	})
}

func (m gradModel) PredictShifted(ctx context.Context, x mat.Matrix, dtheta []float64) (*mat.Dense, error) {
	return m.matrix(ctx, "PredictShifted", func(ctx context.Context) (out *pb.Matrix, err error) {
		err = m.r.withArgs([]mat.Matrix{x}, func(ms []*pb.Matrix) (err error) {
			out, err = m.r.rpc.PredictShifted(ctx, &pb.PredictShiftedRequest{ModelId: m.id, X: ms[0], Dtheta: vec(dtheta)})
			return err
		})
		return out, err
	})
}

// Gram implements framework.Grammer: one round trip carrying G's upper
// triangle and b when the plugin serves it, else from the Jacobian.
func (m gradModel) Gram(ctx context.Context, x mat.Matrix, e []float64) (*mat.SymDense, []float64, error) {
	if !m.r.gram {
		return framework.GramOf(ctx, jacobianOnly{m}, x, e)
	}
	var out *pb.GramResponse
	err := m.r.do(ctx, "Gram", func(ctx context.Context) error {
		return m.r.withArgs([]mat.Matrix{x}, func(ms []*pb.Matrix) (err error) {
			out, err = m.r.rpc.Gram(ctx, &pb.GramRequest{ModelId: m.id, X: ms[0], E: vec(e)})
			return err
		})
	})
	if err != nil {
		return nil, nil, err
	}
	g, err := unpackUpper(int(out.N), out.Upper)
	if err != nil {
		return nil, nil, &Error{Backend: m.r.name, Op: "Gram", Err: err}
	}
	return g, out.GetB().GetData(), nil
}

// PredictShifts implements framework.ShiftBatcher: one round trip for all
// the shifts when the plugin serves it (their matrices keyed as usual), else
// one call per shift (two in the dual form), concurrently.
func (m gradModel) PredictShifts(ctx context.Context, shifts []framework.Shift) ([]*mat.Dense, error) {
	if !m.r.shiftBatch {
		return framework.PredictShiftsEach(ctx, shiftOnly{m, kernelOps{m.model}}, shifts)
	}
	xs := make([]mat.Matrix, 0, 2*len(shifts))
	for _, s := range shifts {
		xs = append(xs, s.X, s.XTrain)
	}
	var out *pb.PredictShiftsResponse
	err := m.r.do(ctx, "PredictShifts", func(ctx context.Context) error {
		return m.r.withArgs(xs, func(ms []*pb.Matrix) (err error) {
			req := &pb.PredictShiftsRequest{ModelId: m.id, Shifts: make([]*pb.Shift, len(shifts))}
			for i, s := range shifts {
				req.Shifts[i] = &pb.Shift{X: ms[2*i], Dtheta: vec(s.DTheta), XTrain: ms[2*i+1], A: vec(s.A)}
			}
			out, err = m.r.rpc.PredictShifts(ctx, req)
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	if len(out.Preds) != len(shifts) {
		return nil, &Error{Backend: m.r.name, Op: "PredictShifts", Err: fmt.Errorf("%d predictions for %d shifts", len(out.Preds), len(shifts))}
	}
	preds := make([]*mat.Dense, len(shifts))
	for i, p := range out.Preds {
		if preds[i], err = fromPB(p); err != nil {
			return nil, &Error{Backend: m.r.name, Op: "PredictShifts", Err: err}
		}
	}
	return preds, nil
}

// shiftOnly is a Gradienter and Kerneler (the latter answering only if the
// plugin's models have kernels) but not a ShiftBatcher, for
// framework.PredictShiftsEach.
type shiftOnly struct {
	framework.Gradienter
	kernelOps
}

// jacobianOnly is a Gradienter and nothing more (not a Grammer), so that
// framework.GramOf uses its Jacobian.
type jacobianOnly struct{ framework.Gradienter }

// kernelOps holds the framework.Kerneler methods.
type kernelOps struct{ m *model }

func (k kernelOps) Kernel(ctx context.Context, x1, x2 mat.Matrix) (*mat.Dense, error) {
	return k.m.matrix(ctx, "Kernel", func(ctx context.Context) (out *pb.Matrix, err error) {
		err = k.m.r.withArgs([]mat.Matrix{x1, x2}, func(ms []*pb.Matrix) (err error) {
			out, err = k.m.r.rpc.Kernel(ctx, &pb.KernelRequest{ModelId: k.m.id, X1: ms[0], X2: ms[1], AllowUpper: x2 == nil})
			return err
		})
		return out, err
	})
}

func (k kernelOps) JacobianTVec(ctx context.Context, x mat.Matrix, a []float64) ([]float64, error) {
	var out *pb.Vector
	err := k.m.r.do(ctx, "JacobianTVec", func(ctx context.Context) error {
		return k.m.r.withArgs([]mat.Matrix{x}, func(ms []*pb.Matrix) (err error) {
			out, err = k.m.r.rpc.JacobianTVec(ctx, &pb.JacobianTVecRequest{ModelId: k.m.id, X: ms[0], A: vec(a)})
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	return out.GetData(), nil
}

// gradKernelModel is a remote Gradienter and Kerneler.
type gradKernelModel struct {
	gradModel
	kernelOps
}

// kernelModel is a remote Model and Kerneler without gradients.
type kernelModel struct {
	*model
	kernelOps
}

// warmOps holds the framework.WarmStarter method: the new model lives in
// the plugin process, and its client is of the same kind as the receiver's.
type warmOps struct{ m *model }

func (w warmOps) WarmStart(ctx context.Context, x mat.Matrix, y []float64, steps int, seed int64) (framework.Model, error) {
	var ref *pb.ModelRef
	err := w.m.r.do(ctx, "WarmStart", func(ctx context.Context) (err error) {
		ref, err = w.m.r.rpc.WarmStart(ctx, &pb.WarmStartRequest{ModelId: w.m.id, X: requestPB(x), Y: vec(y), Steps: int64(steps), Seed: seed})
		return err
	})
	if err != nil {
		return nil, err
	}
	nm := w.m.r.client(ref.ModelId)
	if w.m.gradients {
		// As Fit does: M is known once the model is fitted.
		inner := modelOf(nm)
		err := w.m.r.do(ctx, "NumParams", func(ctx context.Context) error {
			resp, err := w.m.r.rpc.NumParams(ctx, &pb.ModelRef{ModelId: inner.id})
			if err == nil {
				inner.numParams.Store(int64(resp.NumParams))
			}
			return err
		})
		if err != nil {
			_ = framework.Release(nm)
			return nil, err
		}
	}
	return nm, nil
}

// modelOf returns the *model inside a client built by remote.client.
func modelOf(m framework.Model) *model {
	switch v := m.(type) {
	case *model:
		return v
	case *gradModel:
		return v.model
	case *gradKernelModel:
		return v.model
	case *kernelModel:
		return v.model
	case *warmModel:
		return v.model
	case *warmGradModel:
		return v.model
	case *warmGradKernelModel:
		return v.model
	case *warmKernelModel:
		return v.model
	}
	panic(fmt.Sprintf("backendplugin: not a remote model: %T", m))
}

// The warm-startable variants of the client models.
type (
	warmModel struct {
		*model
		warmOps
	}
	warmGradModel struct {
		gradModel
		warmOps
	}
	warmGradKernelModel struct {
		gradModel
		kernelOps
		warmOps
	}
	warmKernelModel struct {
		*model
		kernelOps
		warmOps
	}
)

var (
	_ framework.WarmStarter = (*warmModel)(nil)
	_ framework.Gradienter  = (*warmGradModel)(nil)
	_ framework.WarmStarter = (*warmGradModel)(nil)
	_ framework.Gradienter  = (*warmGradKernelModel)(nil)
	_ framework.Kerneler    = (*warmGradKernelModel)(nil)
	_ framework.WarmStarter = (*warmGradKernelModel)(nil)
	_ framework.Kerneler    = (*warmKernelModel)(nil)
	_ framework.WarmStarter = (*warmKernelModel)(nil)
)

var (
	_ framework.Backend      = (*remote)(nil)
	_ framework.Model        = (*model)(nil)
	_ framework.Gradienter   = (*gradModel)(nil)
	_ framework.Gradienter   = (*gradKernelModel)(nil)
	_ framework.Kerneler     = (*gradKernelModel)(nil)
	_ framework.Grammer      = (*gradModel)(nil)
	_ framework.ShiftBatcher = (*gradModel)(nil)
	_ framework.Kerneler     = (*kernelModel)(nil)
)

var errNoConn = errors.New("dispensed plugin is not a gRPC connection")
