package backendplugin

import (
	"context"
	"fmt"
	"os"
	"sort"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// linear is a fake backend for the tests: y = x.w, whose gradients and
// kernels have closed forms (Jacobian = x, Kernel = x1 x2^T, Phi^T a = x^T a).
// Options: "block" = "fit" makes Fit wait for its context (it signals
// blocking, and in a plugin process writes blockMarker to stderr, first, and
// signals cancelled when the context ends);
// "panic" = "predict" makes Predict panic. Capabilities are configurable to
// build Model-only and Gradienter-only backends.
type linear struct {
	grad, kernel bool
	cancelled    chan struct{} // receives once per Fit that saw its context end
	blocking     chan struct{} // receives once per Fit that waits for its context (when not nil)

	mu       sync.Mutex
	released int
}

const blockMarker = "FAKE-FIT-BLOCKING"

func newLinear() *linear {
	return &linear{grad: true, kernel: true, cancelled: make(chan struct{}, 16), blocking: make(chan struct{}, 16)}
}

func (b *linear) Capabilities() framework.Capabilities {
	return framework.Capabilities{Gradients: b.grad, Kernel: b.kernel, Classification: false}
}

func (b *linear) Options() []framework.OptionInfo {
	return []framework.OptionInfo{
		{Name: "block", Default: "", Usage: `"fit": Fit waits for cancellation`},
		{Name: "panic", Default: "", Usage: `"predict": Predict panics`},
	}
}

func (b *linear) New(_ context.Context, spec framework.ModelSpec) (framework.Model, error) {
	keys := make([]string, 0, len(spec.Options))
	for k := range spec.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k != "block" && k != "panic" {
			return nil, framework.Usagef("unknown option %q", k)
		}
	}
	if spec.Task != framework.Regression {
		return nil, framework.Usagef("task %v not supported", spec.Task)
	}
	m := &linModel{b: b, p: spec.Inputs, block: spec.Options["block"], panicIn: spec.Options["panic"]}
	switch {
	case b.grad && b.kernel:
		return m, nil
	case b.grad:
		return gradOnly{m}, nil
	case b.kernel:
		return struct {
			modelOnly
			framework.Kerneler
		}{modelOnly{m}, m}, nil
	}
	return modelOnly{m}, nil
}

type linModel struct {
	b              *linear
	p              int
	block, panicIn string

	mu sync.RWMutex
	w  []float64
}

func (m *linModel) Close() error {
	m.b.mu.Lock()
	m.b.released++
	m.b.mu.Unlock()
	return nil
}

func (m *linModel) check(x mat.Matrix) error {
	if _, c := x.Dims(); c != m.p {
		return framework.Usagef("x has %d columns, model has %d inputs", c, m.p)
	}
	return nil
}

func (m *linModel) weights() *mat.VecDense {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.w == nil {
		return mat.NewVecDense(m.p, nil)
	}
	return mat.NewVecDense(m.p, append([]float64(nil), m.w...))
}

func (m *linModel) Fit(ctx context.Context, x mat.Matrix, y []float64) error {
	if m.block == "fit" {
		if os.Getenv(serveEnv) != "" { // in the plugin process: tell the test
			fmt.Fprintln(os.Stderr, blockMarker)
		}
		if m.b.blocking != nil {
			m.b.blocking <- struct{}{}
		}
		<-ctx.Done()
		m.b.cancelled <- struct{}{}
		return ctx.Err()
	}
	if err := m.check(x); err != nil {
		return err
	}
	r, _ := x.Dims()
	if len(y) != r {
		return framework.Usagef("len(y) = %d, x has %d rows", len(y), r)
	}
	var w mat.VecDense
	if err := w.SolveVec(x, mat.NewVecDense(r, append([]float64(nil), y...))); err != nil {
		return err
	}
	m.mu.Lock()
	m.w = w.RawVector().Data
	m.mu.Unlock()
	return nil
}

func (m *linModel) Predict(_ context.Context, x mat.Matrix) (*mat.Dense, error) {
	if m.panicIn == "predict" {
		panic("fake panic")
	}
	if err := m.check(x); err != nil {
		return nil, err
	}
	r, _ := x.Dims()
	out := mat.NewDense(r, 1, nil)
	out.Mul(x, m.weights())
	return out, nil
}

func (m *linModel) NumParams() int { return m.p }

func (m *linModel) Jacobian(_ context.Context, x mat.Matrix) (*mat.Dense, error) {
	if err := m.check(x); err != nil {
		return nil, err
	}
	return mat.DenseCopyOf(x), nil
}

func (m *linModel) PredictShifted(_ context.Context, x mat.Matrix, dtheta []float64) (*mat.Dense, error) {
	if err := m.check(x); err != nil {
		return nil, err
	}
	if len(dtheta) != m.p {
		return nil, fmt.Errorf("len(dtheta) = %d, want %d", len(dtheta), m.p)
	}
	w := m.weights()
	w.AddVec(w, mat.NewVecDense(m.p, dtheta))
	r, _ := x.Dims()
	out := mat.NewDense(r, 1, nil)
	out.Mul(x, w)
	return out, nil
}

func (m *linModel) Kernel(_ context.Context, x1, x2 mat.Matrix) (*mat.Dense, error) {
	sym := x2 == nil
	if sym {
		x2 = x1
	}
	if err := m.check(x1); err != nil {
		return nil, err
	}
	if err := m.check(x2); err != nil {
		return nil, err
	}
	var k mat.Dense
	k.Mul(x1, x2.T())
	if sym {
		// Exactly symmetric, as Kerneler promises (a product need not be,
		// depending on the BLAS).
		n, _ := k.Dims()
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				k.Set(j, i, k.At(i, j))
			}
		}
	}
	return &k, nil
}

func (m *linModel) JacobianTVec(_ context.Context, x mat.Matrix, a []float64) ([]float64, error) {
	if err := m.check(x); err != nil {
		return nil, err
	}
	var v mat.VecDense
	v.MulVec(x.T(), mat.NewVecDense(len(a), a))
	return v.RawVector().Data, nil
}

// modelOnly hides everything but Model (and Close).
type modelOnly struct{ m *linModel }

func (o modelOnly) Fit(ctx context.Context, x mat.Matrix, y []float64) error {
	return o.m.Fit(ctx, x, y)
}
func (o modelOnly) Predict(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	return o.m.Predict(ctx, x)
}
func (o modelOnly) Close() error { return o.m.Close() }

// gradOnly hides Kerneler.
type gradOnly struct{ modelOnly0 *linModel }

func (g gradOnly) Fit(ctx context.Context, x mat.Matrix, y []float64) error {
	return g.modelOnly0.Fit(ctx, x, y)
}
func (g gradOnly) Predict(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	return g.modelOnly0.Predict(ctx, x)
}
func (g gradOnly) NumParams() int { return g.modelOnly0.NumParams() }
func (g gradOnly) Jacobian(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	return g.modelOnly0.Jacobian(ctx, x)
}
func (g gradOnly) PredictShifted(ctx context.Context, x mat.Matrix, d []float64) (*mat.Dense, error) {
	return g.modelOnly0.PredictShifted(ctx, x, d)
}
func (g gradOnly) Close() error { return g.modelOnly0.Close() }
