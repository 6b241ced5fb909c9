package lazyvi_test

import (
	"context"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
)

// TestLinearBaselineSeparable: the default linear baseline fits classes
// that a hyperplane separates (breast_cancer.csv's train split does), where
// unpenalised logistic regression has no finite optimum and does not
// converge.
func TestLinearBaselineSeparable(t *testing.T) {
	var cfg pipeline.Config
	lazyvi.FullModelDefaults(&cfg, "mlp", false)
	if len(cfg.Baselines) != 1 || cfg.Baselines[0].Name != "linear" {
		t.Fatalf("baselines %+v, want the linear one", cfg.Baselines)
	}
	b := cfg.Baselines[0]
	n := 60
	x := mat.NewDense(n, 2, nil)
	y := make([]float64, n)
	for i := range n {
		v := float64(i-n/2) + 0.5 // no row on the boundary
		x.Set(i, 0, v/10)
		x.Set(i, 1, float64(i%7)/7)
		if v > 0 {
			y[i] = 1
		}
	}
	ctx := context.Background()
	for _, opts := range []map[string]string{nil, b.Options} {
		m, err := b.Backend.New(ctx, framework.ModelSpec{Task: framework.Binary, Inputs: 2, Options: opts})
		if err != nil {
			t.Fatal(err)
		}
		err = m.Fit(ctx, x, y)
		if opts == nil && err == nil {
			t.Fatalf("unpenalised logistic regression fitted separable classes: the test no longer shows the need for the penalty")
		}
		if opts != nil && err != nil {
			t.Errorf("the default linear baseline (options %v) on separable classes: %v", opts, err)
		}
	}
}
