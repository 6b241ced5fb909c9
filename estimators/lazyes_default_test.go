package estimators_test

import (
	"context"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/estimators"
	"github.com/lazyvi/lazyvi/framework"
)

// stepsModel is a WarmStarter that records the steps it was asked for.
type stepsModel struct{ steps *int }

func (stepsModel) Fit(context.Context, mat.Matrix, []float64) error { return nil }
func (stepsModel) Predict(_ context.Context, x mat.Matrix) (*mat.Dense, error) {
	n, _ := x.Dims()
	return mat.NewDense(n, 1, nil), nil
}
func (m stepsModel) WarmStart(_ context.Context, _ mat.Matrix, _ []float64, steps int, _ int64) (framework.Model, error) {
	*m.steps = steps
	return m, nil
}

// TestLazyESSteps: Steps, else Problem.ESSteps, else DefaultESSteps.
func TestLazyESSteps(t *testing.T) {
	for _, c := range []struct{ est, problem, want int }{
		{0, 0, estimators.DefaultESSteps},
		{0, 50, 50},
		{20, 50, 20},
	} {
		var got int
		p := &framework.Problem{Full: stepsModel{&got}, XTrain: mat.NewDense(3, 2, nil), YTrain: make([]float64, 3),
			XEval: mat.NewDense(2, 2, nil), YEval: make([]float64, 2), FeatureNames: []string{"a", "b"}, ESSteps: c.problem}
		if _, err := (estimators.LazyES{Steps: c.est}).Reduce(context.Background(), p, p.Features()[0]); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("Steps %d, ESSteps %d: %d steps, want %d", c.est, c.problem, got, c.want)
		}
	}
}
