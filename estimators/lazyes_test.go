package estimators_test

import (
	"context"
	"errors"
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

// The paper's linear setting with rho = 0.9: dropout reports about
// beta_1^2 = 2.25 for x1 instead of its conditional importance 0.4275;
// warm-started training on the data without x1 moves the network to the
// reduced optimum, so lazy-es lands near retrain, far below dropout.
func TestLazyESNearRetrain(t *testing.T) {
	ctx := context.Background()
	p := simProblem(t, "linear", 1500, 0.9, 3, mlp.Backend{}, "mlp")
	f := framework.Feature{Name: "x1", Columns: []int{0}}
	ests := []framework.Estimator{estimators.LazyES{Steps: 150}, estimators.Retrain{}, estimators.Dropout{}}
	res, err := pipeline.Estimate(ctx, p, measures.MSE(), ests, []framework.Feature{f}, pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Plain}})
	if err != nil {
		t.Fatal(err)
	}
	es, re, dr := res[0], res[1], res[2]
	for _, r := range res {
		t.Logf("%-8s vi %.4f se %.4f %.3fs", r.Estimator, r.VI, r.SE, r.Seconds)
	}
	// Tolerances from the standard errors: lazy-es within 4 se of retrain,
	// dropout more than 10 se above lazy-es.
	if d := es.VI - re.VI; d > 4*es.SE || d < -4*es.SE {
		t.Errorf("lazy-es %.4f is not within 4 se (%.4f) of retrain %.4f", es.VI, es.SE, re.VI)
	}
	if dr.VI-es.VI < 10*es.SE {
		t.Errorf("dropout %.4f is not far above lazy-es %.4f (se %.4f)", dr.VI, es.VI, es.SE)
	}

	// Steps: the field and the es-steps setting agree, and are
	// deterministic.
	a, err := estimators.LazyES{Steps: 150}.Reduce(ctx, p, f)
	if err != nil {
		t.Fatal(err)
	}
	configured, err := framework.Configure(estimators.LazyES{}, map[string]string{"es-steps": "150", "folds": "4"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := configured.Reduce(ctx, p, f)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(a.Pred, b.Pred) {
		t.Errorf("LazyES{Steps: 150} and es-steps 150 differ")
	}
	c, err := estimators.LazyES{Steps: 1}.Reduce(ctx, p, f)
	if err != nil {
		t.Fatal(err)
	}
	if mat.Equal(a.Pred, c.Pred) {
		t.Errorf("1 step and 150 steps give the same predictions")
	}
}

func TestLazyESNeedsWarmStart(t *testing.T) {
	p := simProblem(t, "linear", 200, 0.5, 1, linear.Backend{}, "linear")
	_, err := estimators.LazyES{}.Reduce(context.Background(), p, p.Features()[0])
	if !errors.Is(err, framework.ErrUsage) {
		t.Errorf("lazy-es on a backend without warm starts: want a usage error, got %v", err)
	}
}
