package shapley

import (
	"context"
	"math"
	"testing"

	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/estimators"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/simulate"
)

// TestLazyFixedIsLazy: the fixed-penalty fast path gives the registered lazy
// estimator's reduced model.
func TestLazyFixedIsLazy(t *testing.T) {
	sim, err := simulate.Linear(300, 0.5, 2)
	if err != nil {
		t.Fatal(err)
	}
	d := &framework.Dataset{Source: "linear", Names: sim.Names, X: sim.X}
	prob, err := framework.Prepare(context.Background(), d, framework.Config{Backend: mlp.Backend{}, BackendName: "mlp",
		Seed: 2, Lambda: 5, Options: map[string]string{"hidden": "50", "epochs": "50"}})
	if err != nil {
		t.Fatal(err)
	}
	defer prob.Close()
	lf := newLazyFixed(prob, estimators.Lazy{})
	if lf == nil {
		t.Fatal("fast path does not apply (n1 = 200 < M = 401, fixed lambda)")
	}
	for _, s := range []Subset{{0}, {1, 2}, {0, 3, 4, 5}} {
		f := framework.Feature{Name: s.String(), Columns: s.Complement(6)}
		want, err := estimators.Lazy{}.Reduce(context.Background(), prob, f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := lf.Reduce(context.Background(), prob, f)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := want.Pred.Dims()
		for i := range n {
			a, b := got.Pred.At(i, 0), want.Pred.At(i, 0)
			if math.Abs(a-b) > 1e-8*(1+math.Abs(b)) {
				t.Fatalf("subset %s, row %d: fast path %v, lazy %v", s, i, a, b)
			}
		}
	}
	prob.Lambda = 0
	if newLazyFixed(prob, estimators.Lazy{}) != nil {
		t.Error("fast path with lambda chosen by CV")
	}
}
