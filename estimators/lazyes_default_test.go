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

// TestLazyESSteps: the registered lazy-es (vi's) takes DefaultESSteps
// steps, a configured one its es-steps, the zero value 0 (one epoch).
func TestLazyESSteps(t *testing.T) {
	reg, err := framework.LookupEstimator("lazy-es")
	if err != nil {
		t.Fatal(err)
	}
	conf, err := reg.(framework.Configurer).Configure(map[string]string{"es-steps": "50"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		est  framework.Estimator
		want int
	}{
		{reg, estimators.DefaultESSteps},
		{conf, 50},
		{estimators.LazyES{}, 0},
	} {
		got := -1
		p := &framework.Problem{Full: stepsModel{&got}, XTrain: mat.NewDense(3, 2, nil), YTrain: make([]float64, 3),
			XEval: mat.NewDense(2, 2, nil), YEval: make([]float64, 2), FeatureNames: []string{"a", "b"}}
		if _, err := c.est.Reduce(context.Background(), p, p.Features()[0]); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%+v: %d steps, want %d", c.est, got, c.want)
		}
	}
}
