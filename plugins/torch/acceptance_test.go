package torch_test

import (
	"context"
	"math"
	"testing"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/estimators"
	"github.com/lazyvi/lazyvi/estimators/lazy"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
)

// The paper's linear setting with rho = 0.9 and n = 2000, as
//
//	vi simulate --setting linear --rho 0.9 --n 2000 --out lin.csv
//	vi estimate --data lin.csv --plugin "$(command -v lazyvi-torch)" --estimators lazy,dropout,retrain
//
// runs it (the same pipeline.Run on the plugin, without the CLI): lazy and
// retrain recover the conditional importance (1 - rho^2) beta_j^2 of the
// correlated pair and beta_3^2 = 1 within max(3 SE, 0.05); dropout reports
// about beta_j^2 for the pair (Proposition 3.1), far above the truth.

const (
	accN   = 2000
	accRho = 0.9
)

var beta = []float64{1.5, 1.2, 1}

// linear simulates the setting with seed and returns it as a data set.
func linear(t testing.TB, n int, seed int64) (*dataio.Dataset, []float64) {
	t.Helper()
	sim, err := simulate.Generate("linear", n, accRho, seed)
	if err != nil {
		t.Fatal(err)
	}
	return &dataio.Dataset{Source: "linear", Names: sim.Names, X: sim.X}, sim.Truth
}

// run estimates every feature of d with ests on the backend b.
func run(t *testing.T, b framework.Backend, d *dataio.Dataset, opts map[string]string, ests ...framework.Estimator) map[[2]string]inference.Result {
	t.Helper()
	return runConfig(t, d, pipeline.Config{Backend: b, BackendName: "lazyvi-torch", Seed: 1, Options: opts}, ests...)
}

// runConfig estimates every feature of d with ests as cfg says.
func runConfig(t *testing.T, d *dataio.Dataset, cfg pipeline.Config, ests ...framework.Estimator) map[[2]string]inference.Result {
	t.Helper()
	rep, err := pipeline.Run(context.Background(), d, cfg, measures.MSE(), ests, pipeline.EstimateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[[2]string]inference.Result{}
	for _, r := range rep.Results {
		t.Logf("%-8s %s vi %.4f se %.4f %.2fs", r.Estimator, r.Feature, r.VI, r.SE, r.Seconds)
		out[[2]string{r.Estimator, r.Feature}] = r
	}
	return out
}

// checkTruth checks estimator est's x1..x3 against the truth and its null
// features x4..x6 against 0.
func checkTruth(t *testing.T, res map[[2]string]inference.Result, est string, truth []float64) {
	t.Helper()
	for j, f := range []string{"x1", "x2", "x3", "x4", "x5", "x6"} {
		r := res[[2]string{est, f}]
		if d := math.Abs(r.VI - truth[j]); !(d <= math.Max(3*r.SE, 0.05)) {
			t.Errorf("%s %s: vi %.4f (se %.4f), want %.4f within max(3 se, 0.05)", est, f, r.VI, r.SE, truth[j])
		}
	}
}

// checkDropoutBiased checks that dropout reports about beta_j^2 for the
// correlated pair, above the truth by more than 3 SE.
func checkDropoutBiased(t *testing.T, res map[[2]string]inference.Result, truth []float64) {
	t.Helper()
	for j, f := range []string{"x1", "x2"} {
		r := res[[2]string{"dropout", f}]
		b2 := beta[j] * beta[j]
		if r.VI < truth[j]+3*r.SE || math.Abs(r.VI-b2) > math.Max(3*r.SE, 0.1*b2) {
			t.Errorf("dropout %s: vi %.4f (se %.4f), want about beta^2 = %.3f, far above the truth %.4f", f, r.VI, r.SE, b2, truth[j])
		}
	}
}

func TestLinearSetting(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 7 networks on 1333 rows in Python")
	}
	b := sharedBackend(t)
	d, truth := linear(t, accN, 1)
	res := run(t, b, d, nil, lazy.Estimator{}, estimators.Dropout{}, estimators.Retrain{})
	checkTruth(t, res, "lazy", truth)
	checkTruth(t, res, "retrain", truth)
	checkDropoutBiased(t, res, truth)
}

// The same for lazy with a user's two-layer tanh network (module=).
func TestLinearSettingModule(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a network on 1333 rows in Python")
	}
	b := sharedBackend(t)
	d, truth := linear(t, accN, 1)
	res := run(t, b, d, map[string]string{"module": abs(t, "tanh.py")}, lazy.Estimator{}, estimators.Dropout{})
	checkTruth(t, res, "lazy", truth)
	checkDropoutBiased(t, res, truth)
}
