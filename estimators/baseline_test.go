package estimators_test

import (
	"context"
	"math"
	"testing"

	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/estimators"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/simulate"
)

// Lazy and lazy-es are scored against their own baseline.
var (
	_ framework.Baseliner = estimators.Lazy{}
	_ framework.Baseliner = estimators.LazyES{}
)

// TestLazyBaselineCancelsTheRefit: on a full network stopped far short of
// its training loss's minimum (5 epochs), lazy's refit improves the model
// whatever feature is dropped. Scored against the full model (no
// baselines) the null features x4..x6 of the linear setting get VIs far
// below 0; framework.Estimate scores them against lazy's baseline, and
// their mean must then be as close to the truth, 0, as dropout's (which
// refits nothing, so has no such offset) up to 3 of dropout's standard
// errors.
func TestLazyBaselineCancelsTheRefit(t *testing.T) {
	sim, err := simulate.Generate("linear", 1500, 0.5, 3)
	if err != nil {
		t.Fatal(err)
	}
	d := &framework.Dataset{Source: "linear", Names: sim.Names, X: sim.X}
	p, err := framework.Prepare(context.Background(), d, framework.Config{Backend: mlp.Backend{}, BackendName: "mlp", Seed: 3,
		Options: map[string]string{"hidden": "32", "epochs": "5", "valid": "0"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	feats := p.Features()[3:]
	ests := []framework.Estimator{estimators.Lazy{}, estimators.Dropout{}}
	m := measures.MSE()
	with, err := framework.Estimate(context.Background(), p, m, ests, feats, framework.EstimateOptions{Workers: 2, Inference: framework.Plain})
	if err != nil {
		t.Fatal(err)
	}
	red, err := framework.Reduce(context.Background(), []*framework.Problem{p}, ests, feats, framework.ReduceOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	without, err := red.Infer(m, framework.InferOptions{Inference: framework.Plain})
	if err != nil {
		t.Fatal(err)
	}
	mean := func(rs []framework.Result) (vi, se float64) {
		for _, r := range rs {
			vi += r.VI / float64(len(rs))
			se += r.SE / float64(len(rs))
		}
		return vi, se
	}
	vw, _ := mean(with[:3])
	vd, sd := mean(with[3:])
	vo, so := mean(without[:3])
	t.Logf("null features' mean VI: lazy against its baseline %.4g, against the full model %.4g (se %.3g); dropout %.4g (se %.3g)", vw, vo, so, vd, sd)
	bound := math.Abs(vd) + 3*sd
	if !(math.Abs(vo) > bound) {
		t.Fatalf("against the full model lazy's null features' mean VI is %.4g, within dropout's %.4g: the refit did not improve the under-trained model, so this test shows nothing", vo, bound)
	}
	if math.Abs(vw) > bound {
		t.Errorf("against lazy's baseline the null features' mean VI is %.4g, farther from 0 than dropout's |%.4g| + 3 se = %.4g", vw, vd, bound)
	}
}
