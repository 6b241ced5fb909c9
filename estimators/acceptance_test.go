package estimators_test

import (
	"context"
	"math"
	"testing"

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

// runSim simulates a paper setting and estimates every feature with dropout,
// retrain and lazy on the default MLP, in process.
func runSim(t testing.TB, setting string, n int, rho float64, seed int64, m framework.Measure) (*pipeline.Report, []float64) {
	t.Helper()
	sim, err := simulate.Generate(setting, n, rho, seed)
	if err != nil {
		t.Fatal(err)
	}
	d := &dataio.Dataset{Source: setting, Names: sim.Names, X: sim.X}
	cfg := pipeline.Config{Backend: mlp.Backend{}, BackendName: "mlp", Seed: seed}
	ests := []framework.Estimator{lazy.Estimator{}, estimators.Retrain{}, estimators.Dropout{}}
	rep, err := pipeline.Run(context.Background(), d, cfg, m, ests, pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Plain}})
	if err != nil {
		t.Fatal(err)
	}
	return rep, sim.Truth
}

func byKey(rep *pipeline.Report) map[[2]string]inference.Result {
	out := map[[2]string]inference.Result{}
	for _, r := range rep.Results {
		out[[2]string{r.Estimator, r.Feature}] = r
	}
	return out
}

// within reports whether est is within max(k se, floor) of want.
func within(r inference.Result, want, k, floor float64) bool {
	return math.Abs(r.VI-want) <= math.Max(k*r.SE, floor)
}

// The paper's linear setting (5.1) with rho = 0.9: lazy and retrain recover
// the conditional importance (1 - rho^2) beta_j^2 of the correlated pair,
// dropout reports about beta_j^2 (Proposition 3.1), nulls are near zero.
func TestLinearSettingRecoversTruth(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 7 networks on 3333 rows")
	}
	const rho = 0.9
	rep, truth := runSim(t, "linear", 5000, rho, 1, measures.MSE())
	res := byKey(rep)
	beta := []float64{1.5, 1.2, 1}
	for _, r := range rep.Results {
		t.Logf("%-8s %s vi %.4f se %.4f [%.4f, %.4f] lambda %v %.2fs", r.Estimator, r.Feature, r.VI, r.SE, r.CILow, r.CIHigh, fmtLambda(r), r.Seconds)
	}
	for _, est := range []string{"lazy", "retrain"} {
		for j, f := range []string{"x1", "x2", "x3"} {
			r := res[[2]string{est, f}]
			if !within(r, truth[j], 3, 0.05) {
				t.Errorf("%s %s: vi %.4f (se %.4f), want %.4f within max(3 se, 0.05)", est, f, r.VI, r.SE, truth[j])
			}
		}
	}
	for j, f := range []string{"x1", "x2"} {
		r := res[[2]string{"dropout", f}]
		// Dropout estimates beta_j^2 Var(x_j) = beta_j^2, far from the
		// truth (1 - rho^2) beta_j^2.
		if r.VI < truth[j]+10*r.SE || !within(r, beta[j]*beta[j], 3, 0.1*beta[j]*beta[j]) {
			t.Errorf("dropout %s: vi %.4f (se %.4f), want about beta^2 = %.3f, far above the truth %.4f", f, r.VI, r.SE, beta[j]*beta[j], truth[j])
		}
	}
	for _, est := range []string{"lazy", "retrain", "dropout"} {
		for _, f := range []string{"x4", "x5", "x6"} {
			if r := res[[2]string{est, f}]; math.Abs(r.VI) > 0.02 {
				t.Errorf("%s %s: vi %.4f, want within 0.02 of 0", est, f, r.VI)
			}
		}
	}
}

// The paper's binary setting (5.2): accuracy VI of x1, x2 is the difference
// of Bayes accuracies (0.136, 0.236).
func TestBinarySettingRecoversTruth(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 5 networks")
	}
	rep, truth := runSim(t, "binary", 1000, 0, 1, measures.Accuracy())
	res := byKey(rep)
	for _, r := range rep.Results {
		t.Logf("%-8s %s vi %.4f se %.4f [%.4f, %.4f] lambda %v %.2fs", r.Estimator, r.Feature, r.VI, r.SE, r.CILow, r.CIHigh, fmtLambda(r), r.Seconds)
	}
	for j, f := range []string{"x1", "x2"} {
		r := res[[2]string{"lazy", f}]
		if !within(r, truth[j], 3, 0.05) {
			t.Errorf("lazy %s: vi %.4f (se %.4f), want %.3f within max(3 se, 0.05)", f, r.VI, r.SE, truth[j])
		}
	}
}

func fmtLambda(r inference.Result) any {
	if nu, _ := r.Get("no_update"); nu == true {
		return "inf"
	}
	if l, ok := r.Get("lambda"); ok {
		return l
	}
	return "-"
}
