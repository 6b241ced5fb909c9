package pipeline_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
)

// probBackend builds models that predict P(Y = 1) = sigmoid(2 x_0), or for
// K classes the softmax of (k x_0)_k: fixed probabilities that need no fit.
type probBackend struct{}

func (probBackend) Capabilities() framework.Capabilities {
	return framework.Capabilities{Classification: true, Multiclass: true}
}
func (probBackend) Options() []framework.OptionInfo { return nil }
func (probBackend) New(_ context.Context, spec framework.ModelSpec) (framework.Model, error) {
	return &probModel{classes: spec.Classes}, nil
}

type probModel struct{ classes int }

func (*probModel) Fit(context.Context, mat.Matrix, []float64) error { return nil }

func (m *probModel) Predict(_ context.Context, x mat.Matrix) (*mat.Dense, error) {
	n, _ := x.Dims()
	if m.classes < 2 {
		out := mat.NewDense(n, 1, nil)
		for i := 0; i < n; i++ {
			out.Set(i, 0, 1/(1+math.Exp(-2*x.At(i, 0))))
		}
		return out, nil
	}
	out := mat.NewDense(n, m.classes, nil)
	for i := 0; i < n; i++ {
		var s float64
		for k := 0; k < m.classes; k++ {
			e := math.Exp(float64(k) * x.At(i, 0))
			out.Set(i, k, e)
			s += e
		}
		for k := 0; k < m.classes; k++ {
			out.Set(i, k, out.At(i, k)/s)
		}
	}
	return out, nil
}

// classData has a label column drawn from x_0 with k classes (2: binary).
func classData(n, k int, seed uint64) *dataio.Dataset {
	rng := rand.New(rand.NewPCG(seed, 9))
	x := mat.NewDense(n, 3, nil)
	for i := 0; i < n; i++ {
		a := rng.NormFloat64()
		label := math.Floor(float64(k) * rng.Float64() * (1 + math.Tanh(a)) / 2.0001)
		x.SetRow(i, []float64{a, rng.NormFloat64(), label})
	}
	return &dataio.Dataset{Source: "class.csv", Names: []string{"a", "b", "y"}, X: x}
}

// TestRunClassificationDefaults: without a measure a binary or multiclass
// run is scored by logloss, and the report carries the full model's
// accuracy (and, binary, AUC) as the measures compute them on the folds.
func TestRunClassificationDefaults(t *testing.T) {
	ctx := context.Background()
	for _, k := range []int{2, 3} {
		d := classData(300, k, uint64(k))
		cfg := pipeline.Config{Backend: probBackend{}, Seed: 4, CrossFit: 3}
		rep, err := pipeline.Run(ctx, d, cfg, nil, []framework.Estimator{shift{0}}, pipeline.EstimateOptions{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Measure != "logloss" {
			t.Errorf("%d classes: measure %q, want logloss", k, rep.Measure)
		}
		folds, err := pipeline.PrepareFolds(ctx, d, cfg, 3, 1)
		if err != nil {
			t.Fatal(err)
		}
		var acc, auc float64
		for _, p := range folds {
			s, err := measures.Accuracy().Evaluate(p.YEval, p.FullEval)
			if err != nil {
				t.Fatal(err)
			}
			acc += s.Value / 3
			if k == 2 {
				if s, err = measures.AUC().Evaluate(p.YEval, p.FullEval); err != nil {
					t.Fatal(err)
				}
				auc += s.Value / 3
			}
			p.Close()
		}
		if rep.Full.Accuracy == nil || !scalar.EqualWithinAbs(*rep.Full.Accuracy, acc, 1e-12) || acc < 0.4 {
			t.Errorf("%d classes: accuracy %v, want %g", k, rep.Full.Accuracy, acc)
		}
		if k == 2 && (rep.Full.AUC == nil || !scalar.EqualWithinAbs(*rep.Full.AUC, auc, 1e-12) || auc < 0.6) {
			t.Errorf("binary: AUC %v, want %g", rep.Full.AUC, auc)
		}
		if k == 3 && rep.Full.AUC != nil {
			t.Errorf("3 classes: AUC %v, want none", *rep.Full.AUC)
		}
	}
}
