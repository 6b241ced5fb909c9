package lazy

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/estimators"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
)

// multiData: 3 classes from x1 and x2 (x2 correlated with x3 at 0.9, so
// dropping x2 leaves a proxy), x4 null.
func multiData(n int, seed uint64) *dataio.Dataset {
	return multiDataOf(n, seed, 0x33, func(x1, x2 float64) []float64 {
		return []float64{1.5 * x1, -1.5*x1 + 1.5*x2, -1.5 * x2}
	})
}

// multiData5: 5 classes from x1 and x2, as multiData.
func multiData5(n int, seed uint64) *dataio.Dataset {
	return multiDataOf(n, seed, 0x35, func(x1, x2 float64) []float64 {
		return []float64{1.5 * x1, -1.5 * x1, 1.5 * x2, -1.5 * x2, 0.75 * (x1 + x2)}
	})
}

// multiDataOf draws n rows of x1, x2, x3 = 0.9 x2 + noise and a null x4,
// the class the highest of scores(x1, x2) plus N(0, 0.25) noise each
// (seed and stream seed the PCG).
func multiDataOf(n int, seed, stream uint64, scores func(x1, x2 float64) []float64) *dataio.Dataset {
	rng := rand.New(rand.NewPCG(seed, stream))
	x := mat.NewDense(n, 5, nil)
	for i := 0; i < n; i++ {
		x1, x2, x4 := rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
		x3 := 0.9*x2 + math.Sqrt(1-0.81)*rng.NormFloat64()
		s := scores(x1, x2)
		best := 0
		for k := range s {
			s[k] += 0.5 * rng.NormFloat64()
			if s[k] > s[best] {
				best = k
			}
		}
		x.SetRow(i, []float64{x1, x2, x3, x4, float64(best)})
	}
	return &dataio.Dataset{Source: "multi", Names: []string{"x1", "x2", "x3", "x4", "y"}, X: x}
}

// prepareMulti prepares d (multiData) for the mlp of the hidden widths,
// seeded 4, closed when the test ends.
func prepareMulti(t *testing.T, d *dataio.Dataset, hidden string) *framework.Problem {
	t.Helper()
	cfg := pipeline.Config{Backend: mlp.Backend{}, BackendName: "mlp", Seed: 4, Options: map[string]string{"hidden": hidden}}
	p, err := pipeline.Prepare(context.Background(), d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// Multiclass lazy against retrain: for the correlated x2, dropout is far
// above both, and lazy lands within 4 standard errors of retrain (logloss,
// plain inference); for every feature the predictions are probabilities.
func TestLazyMulticlassNearRetrain(t *testing.T) {
	ctx := context.Background()
	p := prepareMulti(t, multiData(900, 4), "16")
	if p.Task != framework.Multiclass || p.Classes != 3 {
		t.Fatalf("task %v with %d classes, want multiclass with 3", p.Task, p.Classes)
	}
	ests := []framework.Estimator{Estimator{}, estimators.Retrain{}, estimators.Dropout{}}
	res, err := pipeline.Estimate(ctx, p, measures.LogLoss(), ests, p.Features(), pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Plain}, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	by := lazyNearRetrain(t, res)
	if d, l := by["dropout/x2"], by["lazy/x2"]; d.VI-l.VI < 4*l.SE {
		t.Errorf("x2: dropout %.4f not well above lazy %.4f (se %.4f)", d.VI, l.VI, l.SE)
	}
}

// gradientsOnly hides a model's Kerneler (and its other capabilities): the
// lazy estimator then works from the Jacobian.
type gradientsOnly struct{ framework.Gradienter }

// countedKernel is a Gradienter and Kerneler that counts its Kernel calls.
type countedKernel struct {
	framework.Gradienter
	k     framework.Kerneler
	calls *int
}

func (c countedKernel) Kernel(ctx context.Context, x1, x2 mat.Matrix) (*mat.Dense, error) {
	*c.calls++
	return c.k.Kernel(ctx, x1, x2)
}

func (c countedKernel) JacobianTVec(ctx context.Context, x mat.Matrix, a []float64) ([]float64, error) {
	return c.k.JacobianTVec(ctx, x, a)
}

// TestLazyMulticlassKernel: with several outputs lazy uses the MLP's
// structured kernel ((n K) x (n K)) and gets, at the same penalty, what the
// Jacobian's Gram gives: the same chosen penalty and reduced predictions
// within rounding (relative 1e-9 of the probabilities' scale).
func TestLazyMulticlassKernel(t *testing.T) {
	ctx := context.Background()
	// 100 train rows x 3 outputs against 515 parameters: the dual (kernel)
	// form, as on digits.csv.
	p := prepareMulti(t, multiData(150, 5), "64")
	g, ok := framework.As[framework.Gradienter](p.Full)
	if !ok {
		t.Fatal("the mlp is not a Gradienter")
	}
	kern, ok := framework.As[framework.Kerneler](p.Full)
	if !ok {
		t.Fatal("the mlp is not a Kerneler")
	}
	calls := 0
	pk := *p
	pk.Full = countedKernel{g, kern, &calls}
	q := *p
	q.Full = gradientsOnly{g}
	if _, ok := framework.As[framework.Kerneler](q.Full); ok {
		t.Fatal("gradientsOnly still shows a Kerneler")
	}
	for _, f := range p.Features() {
		viaKernel, err := Estimator{}.Reduce(ctx, &pk, f)
		if err != nil {
			t.Fatal(err)
		}
		viaJacobian, err := Estimator{}.Reduce(ctx, &q, f)
		if err != nil {
			t.Fatal(err)
		}
		lk, lj := viaKernel.Stats[statLambda], viaJacobian.Stats[statLambda]
		if !(lk == lj || math.Abs(lk-lj) <= 1e-6*math.Abs(lj)) {
			t.Errorf("%s: penalty %v through the kernel, %v through the Jacobian", f.Name, lk, lj)
		}
		if !mat.EqualApprox(viaKernel.Pred, viaJacobian.Pred, 1e-9) {
			t.Errorf("%s: reduced predictions differ between the kernel and the Jacobian", f.Name)
		}
	}
	if calls == 0 {
		t.Error("lazy never asked the multiclass model for its kernel")
	}
}

// lazyNearRetrain checks that lazy lands within 4 standard errors (and
// 0.01) of retrain for x1..x4 of the results, and returns them by
// "estimator/feature".
func lazyNearRetrain(t *testing.T, res []inference.Result) map[string]inference.Result {
	t.Helper()
	by := map[string]inference.Result{}
	for _, r := range res {
		by[r.Estimator+"/"+r.Feature] = r
		t.Logf("%-8s %s vi %.4f se %.4f %.3fs %v", r.Estimator, r.Feature, r.VI, r.SE, r.Seconds, r.Extra)
	}
	for _, f := range []string{"x1", "x2", "x3", "x4"} {
		l, r := by["lazy/"+f], by["retrain/"+f]
		if math.Abs(l.VI-r.VI) > 4*math.Max(l.SE, r.SE)+0.01 {
			t.Errorf("%s: lazy %.4f and retrain %.4f differ by more than 4 se (%.4f)", f, l.VI, r.VI, l.SE)
		}
	}
	return by
}
