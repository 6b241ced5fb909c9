package linear_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/lazyvi/lazyvi/backends/linear"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/estimators"
	"github.com/lazyvi/lazyvi/estimators/lazy"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
)

// TestLazyLogisticLogLoss: on logistic regression lazy linearises the
// probabilities (the gradient features are p(1-p) (1, z)), moves the
// parameters, the logit's, and predicts through the sigmoid, so its
// reduced predictions are probabilities and logloss scores them; its
// logloss VI is retrain's (logistic regression refitted with the full
// model's cross-validated penalty) within three standard errors of their
// paired difference, for a strong feature, one correlated with it, an
// independent one and a null (n 3000; the drawn data's differences are at
// most 1.8 of those standard errors).
func TestLazyLogisticLogLoss(t *testing.T) {
	n := 3000
	rng := rand.New(rand.NewPCG(5, 6))
	x := mat.NewDense(n, 5, nil)
	for i := 0; i < n; i++ {
		a, b, c, d := rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
		b = 0.8*a + 0.6*b
		y := 0.0
		if rng.Float64() < 1/(1+math.Exp(-(2*a+b+0.5*c))) {
			y = 1
		}
		x.SetRow(i, []float64{a, b, c, d, y})
	}
	ds := &dataio.Dataset{Source: "logistic", Names: []string{"a", "b", "c", "d", "y"}, X: x}
	p, err := pipeline.Prepare(context.Background(), ds, pipeline.Config{Backend: linear.Backend{}, BackendName: "linear", Seed: 3,
		Options: map[string]string{"ridge": linear.RidgeAuto}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Spec.Options["ridge"] == linear.RidgeAuto {
		t.Fatalf("the reduced models' spec %v still searches the penalty", p.Spec.Options)
	}
	m := measures.LogLoss()
	full, err := m.Evaluate(p.YEval, p.FullEval)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range p.Features() {
		lz := reduce(t, lazy.Estimator{}, p, f)
		rt := reduce(t, estimators.Retrain{}, p, f)
		for i := range p.YEval {
			if v := lz.Pred.At(i, 0); !(v > 0 && v < 1) {
				t.Fatalf("%s: lazy's reduced prediction %d is %v, not a probability", f.Name, i, v)
			}
		}
		sl, err := m.Evaluate(p.YEval, lz.Pred)
		if err != nil {
			t.Fatal(err)
		}
		sr, err := m.Evaluate(p.YEval, rt.Pred)
		if err != nil {
			t.Fatal(err)
		}
		diff := make([]float64, len(sl.Influence))
		for i := range diff {
			diff[i] = sl.Influence[i] - sr.Influence[i]
		}
		se := stat.StdDev(diff, nil) / math.Sqrt(float64(len(diff)))
		vl, vr := full.Value-sl.Value, full.Value-sr.Value
		t.Logf("%s: lazy %.4f, retrain %.4f, se of the difference %.2g", f.Name, vl, vr, se)
		if math.Abs(vl-vr) > 3*se {
			t.Errorf("%s: lazy's logloss VI %.4f, retrain's %.4f: more than 3 se (%.2g) apart", f.Name, vl, vr, se)
		}
	}
}
