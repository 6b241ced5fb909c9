package cpi_test

import (
	"context"
	"math"
	"testing"

	"github.com/lazyvi/lazyvi/backends/linear"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/estimators/cpi"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/internal/closedform"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
)

// On the linear setting with rho 0.9 and a least-squares full model,
// Sobol-CPI with D draws estimates the conditional importance
// beta_j^2 Var(x_j | x_-j) times (1 + 1/D): 0.4275 (1.02) for x1, where
// dropout and permutation importance report 2.25 and 4.5. For the group
// {x1, x2}, independent of the others, it is Var(1.5 x1 + 1.2 x2) (1 +
// 1/D). Tolerances: 4 standard errors plus the least-squares coefficients'
// error (0.05 of the value at n 3000); x1 also within 25%.
func TestCPIClosedForm(t *testing.T) {
	e := cpi.CPI{Draws: cpi.DefaultDraws}
	bias := 1 + 1/float64(e.Draws)
	res := linearResults(t, e, 3000, 1, "")
	c := 1 - closedform.Rho*closedform.Rho
	for j, f := range []string{"x1", "x2", "x3"} {
		b := closedform.Beta[j]
		want := b * b * bias
		if j < 2 {
			want *= c
		}
		if r := res[f]; math.Abs(r.VI-want) > 4*r.SE+0.05*want {
			t.Errorf("%s: vi %.4f (se %.4f), want %.4f", f, r.VI, r.SE, want)
		}
	}
	if r := res["x1"]; math.Abs(r.VI-0.4275) > 0.25*0.4275 {
		t.Errorf("x1: vi %.4f, want within 25%% of 0.4275", r.VI)
	}
	for _, f := range []string{"x4", "x5", "x6"} {
		if r := res[f]; math.Abs(r.VI) > 4*r.SE+0.01 {
			t.Errorf("%s: vi %.4f (se %.4f), want 0", f, r.VI, r.SE)
		}
	}

	g := linearResults(t, e, 3000, 1, "g=x1,x2")
	want := (1.5*1.5 + 1.2*1.2 + 2*1.5*1.2*closedform.Rho) * bias
	if r := g["g"]; math.Abs(r.VI-want) > 4*r.SE+0.05*want {
		t.Errorf("group x1,x2: vi %.4f (se %.4f), want %.4f", r.VI, r.SE, want)
	}
}

// One draw is the original CPI, which scores f on a single conditional
// sample and so estimates twice the conditional importance (for x3,
// independent of the others: 2 beta_3^2 = 2).
func TestCPIOneDrawIsTwice(t *testing.T) {
	res := linearResults(t, cpi.CPI{Draws: 1}, 3000, 2, "")
	for j, f := range []string{"x1", "x3"} {
		b := closedform.Beta[j*2]
		want := 2 * b * b
		if j == 0 {
			want *= 1 - closedform.Rho*closedform.Rho
		}
		if r := res[f]; math.Abs(r.VI-want) > 4*r.SE+0.05*want {
			t.Errorf("%s: vi %.4f (se %.4f), want %.4f", f, r.VI, r.SE, want)
		}
	}
}

func TestCPISettings(t *testing.T) {
	e, err := framework.Configure(cpi.CPI{Draws: cpi.DefaultDraws}, map[string]string{"cpi-draws": "7", "folds": "3"})
	if err != nil {
		t.Fatal(err)
	}
	if e.(cpi.CPI).Draws != 7 {
		t.Errorf("draws %d, want 7", e.(cpi.CPI).Draws)
	}
	if _, err := framework.Configure(cpi.CPI{}, map[string]string{"cpi-draws": "0"}); err == nil {
		t.Error("cpi-draws 0 accepted")
	}
}

// cpi takes vi's default ensemble: its reduced model is an average of the
// full model over conditional draws by design, and averaging it over the
// repetitions' models adds draws of the same law. With one draw per
// repetition the ensemble of M = 3 averages 3 (bias 1 + 1/3 against one
// repetition's 1 + 1), and the debiased estimate, extrapolated in 1/M,
// removes the draws' variance altogether: x1's conditional importance
// beta_1^2 (1 - rho^2) = 0.4275 by default, twice it with --ensemble=false.
// Tolerances: 4 standard errors plus the least-squares coefficients' error.
func TestCPIEnsembleDefault(t *testing.T) {
	sim, err := simulate.Generate("linear", 1500, closedform.Rho, 7)
	if err != nil {
		t.Fatal(err)
	}
	d := &dataio.Dataset{Source: "linear", Names: sim.Names, X: sim.X}
	cfg := pipeline.Config{Backend: linear.Backend{}, BackendName: "linear", Seed: 7, CrossFit: 3, Repeats: 3}
	want := closedform.Beta[0] * closedform.Beta[0] * (1 - closedform.Rho*closedform.Rho)
	for _, c := range []struct {
		ensemble bool
		want     float64
	}{{true, want}, {false, 2 * want}} {
		opt := pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Plain, Ensemble: c.ensemble, Debias: c.ensemble}}
		rep, err := pipeline.Run(context.Background(), d, cfg, measures.MSE(), []framework.Estimator{cpi.CPI{Draws: 1}}, opt)
		if err != nil {
			t.Fatal(err)
		}
		r := rep.Results[0]
		t.Logf("ensemble %v: %s vi %.4f se %.4f", c.ensemble, r.Feature, r.VI, r.SE)
		if r.Feature != "x1" || r.Combined != "" || math.Abs(r.VI-c.want) > 4*r.SE+0.05*c.want {
			t.Errorf("ensemble %v: %s vi %.4f (se %.4f) combined %q, want x1 %.4f from the ensemble's rows", c.ensemble, r.Feature, r.VI, r.SE, r.Combined, c.want)
		}
	}
}

// linearResults is closedform.Linear's results by feature, logged.
func linearResults(t *testing.T, e framework.Estimator, n int, seed int64, groups string) map[string]inference.Result {
	t.Helper()
	res, err := closedform.Linear(context.Background(), e, n, seed, groups)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		t.Logf("%s %s: vi %.4f se %.4f", r.Estimator, r.Feature, r.VI, r.SE)
	}
	return res
}

// TestCPIConditionalMean: cpi's reduced model counts as the full model's
// conditional mean (framework.ConditionalMean, which the covariance test
// needs) from MinConditionalDraws draws, as the default's 50 are, not with
// fewer (one draw is one sample of the feature, not its mean).
func TestCPIConditionalMean(t *testing.T) {
	for _, c := range []struct {
		draws int
		want  bool
	}{{cpi.DefaultDraws, true}, {cpi.MinConditionalDraws, true}, {cpi.MinConditionalDraws - 1, false}, {1, false}} {
		if got := framework.IsConditionalMean(cpi.CPI{Draws: c.draws}); got != c.want {
			t.Errorf("draws %d: conditional mean %v, want %v", c.draws, got, c.want)
		}
	}
}
