package estimators_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/backends/linear"
	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/estimators"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
)

// The paper's linear setting with rho = 0.9: the conditional importance of
// x1 is beta_1^2 (1 - rho^2) = 0.4275 and dropout reports about beta_1^2 =
// 2.25. Warm-es starts at dropout's solution and trains on until the
// held-out train rows stop improving, which moves the network to x2's
// share of x1's signal: it lands within 25% of the truth (and within 4 of
// its standard errors plus 10% of it), far below dropout, stopping before
// its cap; x4, of no importance, stays within 4 standard errors of 0.
func TestWarmESClosedForm(t *testing.T) {
	ctx := context.Background()
	p := simProblem(t, "linear", 1500, 0.9, 3, mlp.Backend{}, "mlp")
	x1 := framework.Feature{Name: "x1", Columns: []int{0}}
	x4 := framework.Feature{Name: "x4", Columns: []int{3}}
	e := estimators.WarmES{MaxEpochs: estimators.DefaultWarmESEpochs}
	res, err := pipeline.Estimate(ctx, p, measures.MSE(), []framework.Estimator{e, estimators.Dropout{}}, []framework.Feature{x1, x4},
		pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Plain}})
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]inference.Result{}
	for _, r := range res {
		t.Logf("%-8s %s vi %.4f se %.4f %v", r.Estimator, r.Feature, r.VI, r.SE, r.Extra)
		byKey[r.Estimator+" "+r.Feature] = r
	}
	const truth = 0.4275
	es, dr := byKey["warm-es x1"], byKey["dropout x1"]
	if math.Abs(es.VI-truth) > 0.25*truth || math.Abs(es.VI-truth) > 4*es.SE+0.1*truth {
		t.Errorf("warm-es x1 %.4f (se %.4f), want within 25%% of %.4f", es.VI, es.SE, truth)
	}
	if dr.VI-es.VI < 10*es.SE {
		t.Errorf("dropout %.4f is not far above warm-es %.4f (se %.4f)", dr.VI, es.VI, es.SE)
	}
	if r := byKey["warm-es x4"]; math.Abs(r.VI) > 4*r.SE {
		t.Errorf("warm-es x4 %.4f (se %.4f), want 0", r.VI, r.SE)
	}

	// The stopping rule ends the warm start before the cap; the same seed
	// gives the same predictions; es-epochs configures the cap, and a cap
	// of one epoch gives other predictions.
	a, err := e.Reduce(ctx, p, x1)
	if err != nil {
		t.Fatal(err)
	}
	if n := a.Stats["epochs"]; n < 1 || n >= estimators.DefaultWarmESEpochs {
		t.Errorf("warm-es ran %v epochs, want between 1 and the cap %d", n, estimators.DefaultWarmESEpochs)
	}
	b, err := e.Reduce(ctx, p, x1)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(a.Pred, b.Pred) {
		t.Error("warm-es: two runs with the same seed differ")
	}
	one, err := framework.Configure(e, map[string]string{"es-epochs": "1", "folds": "3"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := one.Reduce(ctx, p, x1)
	if err != nil {
		t.Fatal(err)
	}
	if c.Stats["epochs"] != 1 || mat.Equal(a.Pred, c.Pred) {
		t.Errorf("es-epochs 1: %v epochs, same predictions as the default: %v", c.Stats["epochs"], mat.Equal(a.Pred, c.Pred))
	}
	if _, err := framework.Configure(e, map[string]string{"es-epochs": "0"}); !errors.Is(err, framework.ErrUsage) {
		t.Errorf("es-epochs 0: want a usage error, got %v", err)
	}
}

func TestWarmESNeedsWarmStop(t *testing.T) {
	p := simProblem(t, "linear", 200, 0.5, 1, linear.Backend{}, "linear")
	_, err := estimators.WarmES{MaxEpochs: 5}.Reduce(context.Background(), p, p.Features()[0])
	if !errors.Is(err, framework.ErrUsage) {
		t.Errorf("warm-es on a backend without warm starts: want a usage error, got %v", err)
	}
}
