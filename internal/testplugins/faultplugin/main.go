// Command faultplugin is the MLP backend as an external plugin that crashes
// on demand, for vi's fault-injection test (a test-only executable: the
// production backends have no such hook).
//
// Environment:
//
//	LAZYVI_TEST_FAULT=Op:N    the process kills itself (SIGKILL) on entering
//	                          the N-th call of the model method Op (counted
//	                          over all its models), or before the handshake
//	                          with Op "start"
//	LAZYVI_TEST_FAULT_LOG=F   every model method call appends its name to F
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/backendplugin"
	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/framework"
)

func main() {
	f, err := newFaults(os.Getenv("LAZYVI_TEST_FAULT"), os.Getenv("LAZYVI_TEST_FAULT_LOG"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "faultplugin:", err)
		os.Exit(2)
	}
	f.enter("start")
	backendplugin.Serve(backend{Backend: mlp.Backend{}, f: f})
}

// faults counts the model method calls and kills the process at the one
// asked for.
type faults struct {
	op string
	n  int

	mu     sync.Mutex
	counts map[string]int
	log    *os.File
}

func newFaults(spec, logPath string) (*faults, error) {
	f := &faults{counts: map[string]int{}}
	if spec != "" {
		op, n, ok := strings.Cut(spec, ":")
		k, err := strconv.Atoi(n)
		if !ok || err != nil || k < 1 {
			return nil, fmt.Errorf("LAZYVI_TEST_FAULT=%q: want Op:N with N >= 1", spec)
		}
		f.op, f.n = op, k
	}
	if logPath != "" {
		l, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, err
		}
		f.log = l
	}
	return f, nil
}

// enter records a call of op, and kills the process if it is the one.
func (f *faults) enter(op string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts[op]++
	if f.log != nil && op != "start" {
		fmt.Fprintln(f.log, op)
	}
	if op == f.op && f.counts[op] == f.n {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal lands
	}
}

type backend struct {
	mlp.Backend
	f *faults
}

func (b backend) New(ctx context.Context, spec framework.ModelSpec) (framework.Model, error) {
	m, err := b.Backend.New(ctx, spec)
	if err != nil {
		return nil, err
	}
	return model{m.(*mlp.Model), b.f}, nil
}

// model is an MLP model whose every method (of the interfaces *mlp.Model
// implements) passes through faults.enter.
type model struct {
	m *mlp.Model
	f *faults
}

func (m model) Fit(ctx context.Context, x mat.Matrix, y []float64) error {
	m.f.enter("Fit")
	return m.m.Fit(ctx, x, y)
}

func (m model) Predict(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	m.f.enter("Predict")
	return m.m.Predict(ctx, x)
}

func (m model) NumParams() int { return m.m.NumParams() }

func (m model) FitReport() framework.FitReport { return m.m.FitReport() }

func (m model) Jacobian(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	m.f.enter("Jacobian")
	return m.m.Jacobian(ctx, x)
}

func (m model) PredictShifted(ctx context.Context, x mat.Matrix, dtheta []float64) (*mat.Dense, error) {
	m.f.enter("PredictShifted")
	return m.m.PredictShifted(ctx, x, dtheta)
}

func (m model) Kernel(ctx context.Context, x1, x2 mat.Matrix) (*mat.Dense, error) {
	m.f.enter("Kernel")
	return m.m.Kernel(ctx, x1, x2)
}

func (m model) JacobianTVec(ctx context.Context, x mat.Matrix, a []float64) ([]float64, error) {
	m.f.enter("JacobianTVec")
	return m.m.JacobianTVec(ctx, x, a)
}

func (m model) WarmStart(ctx context.Context, x mat.Matrix, y []float64, steps int, seed int64) (framework.Model, error) {
	m.f.enter("WarmStart")
	w, err := m.m.WarmStart(ctx, x, y, steps, seed)
	if err != nil {
		return nil, err
	}
	return model{w.(*mlp.Model), m.f}, nil
}

func (m model) WarmStartStopped(ctx context.Context, x mat.Matrix, y []float64, maxEpochs int, seed int64) (framework.Model, error) {
	m.f.enter("WarmStartStopped")
	w, err := m.m.WarmStartStopped(ctx, x, y, maxEpochs, seed)
	if err != nil {
		return nil, err
	}
	return model{w.(*mlp.Model), m.f}, nil
}

func (m model) JacobianMul(ctx context.Context, x mat.Matrix, v *mat.Dense) (*mat.Dense, error) {
	m.f.enter("JacobianMul")
	return m.m.JacobianMul(ctx, x, v)
}

func (m model) JacobianTMul(ctx context.Context, x mat.Matrix, u *mat.Dense) (*mat.Dense, error) {
	m.f.enter("JacobianTMul")
	return m.m.JacobianTMul(ctx, x, u)
}

// SinglePrecision: the model's single-precision products, counted under
// the same names as its double ones.
func (m model) SinglePrecision() framework.JacobianMultiplier {
	return single{m.m.SinglePrecision(), m.f}
}

type single struct {
	jm framework.JacobianMultiplier
	f  *faults
}

func (s single) JacobianMul(ctx context.Context, x mat.Matrix, v *mat.Dense) (*mat.Dense, error) {
	s.f.enter("JacobianMul")
	return s.jm.JacobianMul(ctx, x, v)
}

func (s single) JacobianTMul(ctx context.Context, x mat.Matrix, u *mat.Dense) (*mat.Dense, error) {
	s.f.enter("JacobianTMul")
	return s.jm.JacobianTMul(ctx, x, u)
}

// SingleKernel: the model's single-precision kernel and transposed
// product, counted under the same names as its double ones.
func (m model) SingleKernel() framework.Kerneler {
	return singleKernel{m.m.SingleKernel(), m.f}
}

type singleKernel struct {
	k framework.Kerneler
	f *faults
}

func (s singleKernel) Kernel(ctx context.Context, x1, x2 mat.Matrix) (*mat.Dense, error) {
	s.f.enter("Kernel")
	return s.k.Kernel(ctx, x1, x2)
}

func (s singleKernel) JacobianTVec(ctx context.Context, x mat.Matrix, a []float64) ([]float64, error) {
	s.f.enter("JacobianTVec")
	return s.k.JacobianTVec(ctx, x, a)
}

func (m model) SaveState(ctx context.Context) ([]byte, error) {
	m.f.enter("Save")
	return m.m.SaveState(ctx)
}

func (m model) LoadState(ctx context.Context, state []byte) error {
	m.f.enter("Load")
	return m.m.LoadState(ctx, state)
}

// The interfaces of *mlp.Model that the plugin server looks for.
var (
	_ framework.Kerneler           = model{}
	_ framework.WarmStopper        = model{}
	_ framework.FitReporter        = model{}
	_ framework.JacobianMultiplier = model{}
	_ framework.SinglePrecisioner  = model{}
	_ framework.SingleKerneler     = model{}
	_ framework.Persister          = model{}
)
