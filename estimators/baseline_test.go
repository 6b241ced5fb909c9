package estimators_test

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/estimators"
	"github.com/lazyvi/lazyvi/estimators/lazy"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
)

// Lazy and lazy-es are scored against their own baseline.
var (
	_ framework.Baseliner = lazy.Estimator{}
	_ framework.Baseliner = estimators.LazyES{}
)

// TestLazyBaselineCancelsTheRefit: on a full network stopped far short of
// its training loss's minimum (5 epochs), lazy's refit improves the model
// whatever feature is dropped. Scored against the full model (no
// baselines) the null features x4..x6 of the linear setting get VIs far
// below 0; pipeline.Estimate scores them against lazy's baseline, and
// their mean must then be as close to the truth, 0, as dropout's (which
// refits nothing, so has no such offset), up to the standard errors of
// both.
//
// Two checks. An identity, exact up to rounding: the reduced models are
// the same with and without baselines (at these sizes lazy's ReduceFrom is
// its Reduce), so each feature's VI against the baseline is its VI against
// the full model plus the baseline's improvement V(base) - V(full), the
// same constant for every feature.
// Then the cancellation itself, statistically. The bound is not 3 of
// lazy's standard errors around 0: the network uses the null features a
// little (5 epochs from a random start), and removing that use mostly
// lowers the loss, a real property of the model: lazy's mean here is 4.2
// of its standard errors below 0, and more than 3 below on 7 of seeds
// 1-12. Dropout estimates that reliance, without a refit. The claim is
// that lazy against its baseline is no farther from 0 than dropout:
// |mu_lazy| <= |mu_dropout| for the estimates' means. Then
//
//	|vi_lazy| <= |mu_lazy| + |vi_lazy - mu_lazy|
//	         <= |vi_dropout| + |vi_dropout - mu_dropout| + |vi_lazy - mu_lazy|
//	         <= |vi_dropout| + 3 (se_lazy + se_dropout)
//
// with each estimate within 3 of its standard errors of its mean, whatever
// their correlation (both are scored on the same rows) and their signs.
// The standard errors are the plain ones of the mean of the three VIs,
// sd(mean_j [IF_ref - IF_reduced_j]) / sqrt(n) over the evaluation rows
// (the mean of the three features' standard errors is only an upper bound
// of it, Minkowski's inequality: here 1.4 times lazy's, 1.6 times
// dropout's).
func TestLazyBaselineCancelsTheRefit(t *testing.T) {
	ctx := context.Background()
	sim, err := simulate.Generate("linear", 1500, 0.5, 3)
	if err != nil {
		t.Fatal(err)
	}
	d := &dataio.Dataset{Source: "linear", Names: sim.Names, X: sim.X}
	p, err := pipeline.Prepare(ctx, d, pipeline.Config{Backend: mlp.Backend{}, BackendName: "mlp", Seed: 3,
		Options: map[string]string{"hidden": "32", "epochs": "5", "valid": "0"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	feats := p.Features()[3:]
	ests := []framework.Estimator{lazy.Estimator{}, estimators.Dropout{}}
	m := measures.MSE()
	with, err := pipeline.Estimate(ctx, p, m, ests, feats, pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Plain}, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	red, err := pipeline.Reduce(ctx, []*framework.Problem{p}, ests, feats, pipeline.ReduceOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	without, err := red.Infer(m, inference.InferOptions{Inference: inference.Plain})
	if err != nil {
		t.Fatal(err)
	}
	base, err := lazy.Estimator{}.Baseline(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	score := func(pred mat.Matrix) framework.Score {
		s, err := m.Evaluate(p.YEval, pred)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	full, bs := score(p.FullEval), score(base.Pred)

	// The identity, up to rounding: off and want are four subtractions
	// (the two VIs, their difference, the improvement) of scores no larger
	// than big in magnitude, each rounded to within half an ulp (eps/2
	// relative) of a result no larger than 2 big: 4 eps big in all.
	const eps = 0x1p-52
	big := math.Max(math.Abs(full.Value), math.Abs(bs.Value))
	for j, f := range feats {
		big = math.Max(big, math.Abs(score(red.Reduced[0][0][j].Pred).Value))
		off := with[j].VI - without[j].VI
		if want := bs.Value - full.Value; math.Abs(off-want) > 4*eps*big {
			t.Errorf("%s: lazy's VI against its baseline minus against the full model is %.17g, want the baseline's improvement %.17g", f.Name, off, want)
		}
	}

	// mean is the mean VI of the three null features of estimator e
	// (Results in estimator, then feature order) and its standard error,
	// each feature's reduced model (red's: Estimate's, by the identity)
	// scored against ref.
	mean := func(rs []inference.Result, e int, ref framework.Score) (vi, se float64) {
		d := make([]float64, len(ref.Influence))
		for j, r := range rs {
			vi += r.VI / float64(len(rs))
			s := score(red.Reduced[0][e][j].Pred)
			for i := range d {
				d[i] += (ref.Influence[i] - s.Influence[i]) / float64(len(rs))
			}
		}
		return vi, math.Sqrt(stat.Variance(d, nil) / float64(len(d)))
	}
	vw, sw := mean(with[:3], 0, bs)
	vd, sd := mean(with[3:], 1, full)
	vo, so := mean(without[:3], 0, full)
	t.Logf("null features' mean VI: lazy against its baseline %.4g (se %.3g), against the full model %.4g (se %.3g); dropout %.4g (se %.3g)", vw, sw, vo, so, vd, sd)
	bound := math.Abs(vd) + 3*(sw+sd)
	if !(math.Abs(vo) > bound) {
		t.Fatalf("against the full model lazy's null features' mean VI is %.4g, within the bound %.4g: the refit did not improve the under-trained model, so this test shows nothing", vo, bound)
	}
	if math.Abs(vw) > bound {
		t.Errorf("against lazy's baseline the null features' mean VI is %.4g, farther from 0 than dropout's |%.4g| + 3 (se %.3g + se %.3g) = %.4g", vw, vd, sw, sd, bound)
	}
}
