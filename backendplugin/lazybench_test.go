package backendplugin

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// The calls of lazy at scale, at the sizes of `vi bench highdim --n 10000
// --width 200:100` (n1 = 6667 training rows of p = 100 inputs, M = 40401
// parameters, a 1000-row subsample, held-out folds of 333 rows): the
// model's answers are precomputed, so that the benchmark times the
// transport's own work per call (hashing, packing, copies, round trips).
const (
	lbRows, lbInputs, lbParams = 6667, 100, 40401
	lbSub, lbHeld, lbShifts    = 1000, 333, 5
)

// lazyBenchBackend's models answer with precomputed matrices of the right
// shapes.
type lazyBenchBackend struct{}

func (lazyBenchBackend) Capabilities() framework.Capabilities {
	return framework.Capabilities{Gradients: true, Kernel: true, MatrixFree: true}
}
func (lazyBenchBackend) Options() []framework.OptionInfo { return nil }
func (lazyBenchBackend) New(context.Context, framework.ModelSpec) (framework.Model, error) {
	return lazyBenchModel{}, nil
}

type lazyBenchAnswers struct {
	col, held *mat.Dense // lbRows x 1, lbHeld x 1
	param     *mat.Dense // lbParams x 1
	kernel    *mat.Dense // lbSub x lbSub, exactly symmetric
}

var lazyBenchOut = sync.OnceValue(func() lazyBenchAnswers {
	rng := rand.New(rand.NewPCG(13, 14))
	k := randDense(rng, lbSub, lbSub)
	for i := 0; i < lbSub; i++ {
		for j := 0; j < i; j++ {
			k.Set(i, j, k.At(j, i))
		}
	}
	return lazyBenchAnswers{col: randDense(rng, lbRows, 1), held: randDense(rng, lbHeld, 1),
		param: randDense(rng, lbParams, 1), kernel: k}
})

type lazyBenchModel struct{}

func (lazyBenchModel) Fit(context.Context, mat.Matrix, []float64) error { return nil }
func (lazyBenchModel) Predict(context.Context, mat.Matrix) (*mat.Dense, error) {
	return lazyBenchOut().col, nil
}
func (lazyBenchModel) NumParams() int { return lbParams }
func (lazyBenchModel) Jacobian(context.Context, mat.Matrix) (*mat.Dense, error) {
	return nil, framework.Usagef("no Jacobian in the benchmark")
}
func (lazyBenchModel) PredictShifted(context.Context, mat.Matrix, []float64) (*mat.Dense, error) {
	return lazyBenchOut().held, nil
}
func (lazyBenchModel) Kernel(context.Context, mat.Matrix, mat.Matrix) (*mat.Dense, error) {
	return lazyBenchOut().kernel, nil
}
func (lazyBenchModel) JacobianTVec(context.Context, mat.Matrix, []float64) ([]float64, error) {
	return lazyBenchOut().param.RawMatrix().Data, nil
}
func (lazyBenchModel) JacobianMul(context.Context, mat.Matrix, *mat.Dense) (*mat.Dense, error) {
	return lazyBenchOut().col, nil
}
func (lazyBenchModel) JacobianTMul(context.Context, mat.Matrix, *mat.Dense) (*mat.Dense, error) {
	return lazyBenchOut().param, nil
}

// benchLazyCall times one kind of lazy's calls on backend; MB/s counts the
// values that cross (a cached matrix's as a key).
func benchLazyCall(b *testing.B, backend framework.Backend, kind string) {
	ctx := context.Background()
	m, err := backend.New(ctx, framework.ModelSpec{Inputs: lbInputs})
	if err != nil {
		b.Fatal(err)
	}
	defer framework.Release(m)
	jm, _ := framework.As[framework.JacobianMultiplier](m)
	rng := rand.New(rand.NewPCG(15, 16))
	x := randDense(rng, lbRows, lbInputs)
	v, u := randDense(rng, lbParams, 1), randDense(rng, lbRows, 1)
	var err2 error
	switch kind {
	case "JacobianMul": // a Krylov step's Phi v on the cached training rows
		b.SetBytes(8 * (lbParams + lbRows))
		for b.Loop() {
			_, err2 = jm.JacobianMul(ctx, x, v)
		}
	case "JacobianTMul": // and its Phi^T u
		b.SetBytes(8 * (lbRows + lbParams))
		for b.Loop() {
			_, err2 = jm.JacobianTMul(ctx, x, u)
		}
	case "PredictShifts": // a penalty search's batch on a held-out fold
		xh := x.Slice(0, lbHeld, 0, lbInputs)
		shifts := make([]framework.Shift, lbShifts)
		for i := range shifts {
			shifts[i] = framework.Shift{X: xh, DTheta: randVec(rng, lbParams)}
		}
		sb := m.(framework.ShiftBatcher)
		b.SetBytes(8 * lbShifts * (lbParams + lbHeld))
		for b.Loop() {
			_, err2 = sb.PredictShifts(ctx, shifts)
		}
	case "Kernel": // the subsample's kernel, its upper triangle crossing
		xs := x.Slice(0, lbSub, 0, lbInputs)
		b.SetBytes(8 * lbSub * (lbSub + 1) / 2)
		for b.Loop() {
			_, err2 = m.(framework.Kerneler).Kernel(ctx, xs, nil)
		}
	case "PredictNew": // the training rows sent whole (new values each call)
		b.SetBytes(8 * (lbRows*lbInputs + lbRows))
		for b.Loop() {
			x.Set(0, 0, x.At(0, 0)+1)
			_, err2 = m.Predict(ctx, x)
		}
	}
	if err2 != nil {
		b.Fatal(err2)
	}
}

// BenchmarkLazyCalls times lazy's calls at scale through a real plugin
// process (unix socket) and in memory (bufconn), against a model that
// answers at once: the per-call cost of the transport.
func BenchmarkLazyCalls(b *testing.B) {
	c := openPlugin(b, "lazybench")
	mem := inProcess(b, "lazybench", lazyBenchBackend{})
	for _, kind := range []string{"JacobianMul", "JacobianTMul", "PredictShifts", "Kernel", "PredictNew"} {
		b.Run(kind+"/process", func(b *testing.B) { benchLazyCall(b, c.Backend(), kind) })
		b.Run(kind+"/inmemory", func(b *testing.B) { benchLazyCall(b, mem, kind) })
	}
}
