package permute_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/lazyvi/lazyvi/backends/linear"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"

	"github.com/lazyvi/lazyvi/estimators/permute"
	"github.com/lazyvi/lazyvi/internal/closedform"
)

// On the linear setting with rho 0.9 and a least-squares full model,
// permuting x_j adds 2 beta_j^2 Var(x_j) to the squared loss (4.5 for x1),
// whatever the correlation: more than twice the conditional importance
// beta_1^2 (1 - rho^2) = 0.4275 that retrain estimates. Permuting the group
// {x1, x2} jointly adds 2 Var(1.5 x1 + 1.2 x2) = 2 (1.5^2 + 1.2^2 +
// 2 1.5 1.2 rho). Tolerances: 4 standard errors, plus the least-squares
// coefficients' own error (about 0.05 of a coefficient's square at n 3000).
func TestPermuteClosedForm(t *testing.T) {
	res := linearResults(t, permute.Permute{Repeats: permute.DefaultRepeats}, 3000, 1, "")
	for j, f := range []string{"x1", "x2", "x3"} {
		b := closedform.Beta[j]
		want := 2 * b * b
		if r := res[f]; math.Abs(r.VI-want) > 4*r.SE+0.05*want {
			t.Errorf("%s: vi %.4f (se %.4f), want 2 beta^2 = %.4f", f, r.VI, r.SE, want)
		}
	}
	cond := 1.5 * 1.5 * (1 - closedform.Rho*closedform.Rho)
	if r := res["x1"]; r.VI-4*r.SE < 2*cond {
		t.Errorf("x1: vi %.4f (se %.4f), want above twice the conditional importance %.4f", r.VI, r.SE, cond)
	}
	for _, f := range []string{"x4", "x5", "x6"} {
		if r := res[f]; math.Abs(r.VI) > 4*r.SE+0.01 {
			t.Errorf("%s: vi %.4f (se %.4f), want 0", f, r.VI, r.SE)
		}
	}

	g := linearResults(t, permute.Permute{Repeats: permute.DefaultRepeats}, 3000, 1, "g=x1,x2")
	want := 2 * (1.5*1.5 + 1.2*1.2 + 2*1.5*1.2*closedform.Rho)
	r, ok := g["g"]
	if !ok {
		t.Fatalf("no result for the group x1,x2: %v", g)
	}
	if math.Abs(r.VI-want) > 4*r.SE+0.05*want {
		t.Errorf("group x1,x2: vi %.4f (se %.4f), want %.4f", r.VI, r.SE, want)
	}
}

// The same seed gives the same numbers; another seed another permutation.
func TestPermuteSeeded(t *testing.T) {
	a := linearResults(t, permute.Permute{Repeats: 3}, 500, 3, "")
	b := linearResults(t, permute.Permute{Repeats: 3}, 500, 3, "")
	for f, r := range a {
		if b[f].VI != r.VI || b[f].SE != r.SE {
			t.Errorf("%s: seed 3 gave %v then %v", f, r.VI, b[f].VI)
		}
	}
}

// Averaging R permutations divides the permutations' own spread by R: on
// one split and full model of the linear setting, x1's importance drawn
// under 40 permutation seeds varies about R times less with R = 5 than
// with one permutation (the ratio's sampling error at 39 and 39 degrees of
// freedom keeps it below 1/2 with probability above 0.99; the seeds are
// fixed). Each importance is the mean over the draws of the reduced
// model's score, as inference takes it, and stays within 4 of its
// standard errors of 2 beta_1^2 = 4.5.
func TestPermuteRepeatsAverage(t *testing.T) {
	sim, err := simulate.Generate("linear", 2000, closedform.Rho, 5)
	if err != nil {
		t.Fatal(err)
	}
	d := &dataio.Dataset{Source: "linear", Names: sim.Names, X: sim.X}
	ctx := context.Background()
	p, err := pipeline.Prepare(ctx, d, pipeline.Config{Backend: linear.Backend{}, BackendName: "linear", Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	m := measures.MSE()
	full, err := m.Evaluate(p.YEval, p.FullEval)
	if err != nil {
		t.Fatal(err)
	}
	x1 := framework.Feature{Name: "x1", Columns: []int{0}}
	vis := func(repeats int) []float64 {
		var out []float64
		for s := int64(0); s < 40; s++ {
			q := *p
			q.Seed = 100 + s
			red, err := permute.Permute{Repeats: repeats}.Reduce(ctx, &q, x1)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(red.Predictions()); got != repeats {
				t.Fatalf("%d repeats: %d predictions", repeats, got)
			}
			var v float64
			for _, pred := range red.Predictions() {
				sc, err := m.Evaluate(p.YEval, pred)
				if err != nil {
					t.Fatal(err)
				}
				v += sc.Value
			}
			out = append(out, full.Value-v/float64(repeats))
		}
		return out
	}
	one, five := vis(1), vis(5)
	v1, v5 := stat.Variance(one, nil), stat.Variance(five, nil)
	t.Logf("x1 over 40 seeds: 1 permutation mean %.4f var %.3g; 5 permutations mean %.4f var %.3g (ratio %.3f)",
		stat.Mean(one, nil), v1, stat.Mean(five, nil), v5, v5/v1)
	if v5 > v1/2 {
		t.Errorf("5 permutations: variance %.3g, want under half of one permutation's %.3g", v5, v1)
	}
	if m5, se := stat.Mean(five, nil), math.Sqrt(v5/40); math.Abs(m5-4.5) > 4*se+0.05*4.5 {
		t.Errorf("5 permutations: mean vi %.4f (se %.4f), want 4.5", m5, se)
	}

	// The first draw is the single permutation's: a repeat adds draws.
	a, err := permute.Permute{Repeats: 1}.Reduce(ctx, p, x1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := permute.Permute{Repeats: 3}.Reduce(ctx, p, x1)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(a.Pred, b.Pred) || len(b.Draws) != 2 || mat.Equal(b.Draws[0], b.Pred) {
		t.Error("3 repeats: want the single permutation's predictions first, then 2 other draws")
	}
	e, err := framework.Configure(permute.Permute{Repeats: permute.DefaultRepeats}, map[string]string{"permute-repeats": "7", "folds": "3"})
	if err != nil || e.(permute.Permute).Repeats != 7 {
		t.Errorf("permute-repeats 7: got %v, %v", e, err)
	}
	// Counts a run cannot mean are usage errors that say why: 1e9 is
	// not "< 1", and a billion permutations' predictions cannot be kept.
	for v, want := range map[string]string{"0": "permute-repeats 0 is out of range: want 1 to 1000",
		"1e9": `permute-repeats must be a whole number from 1 to 1000, got "1e9"`, "1000000000": "permute-repeats 1000000000 is out of range: want 1 to 1000"} {
		if _, err := framework.Configure(permute.Permute{}, map[string]string{"permute-repeats": v}); !errors.Is(err, framework.ErrUsage) || !strings.Contains(err.Error(), want) {
			t.Errorf("permute-repeats %s: %v, want a usage error with %q", v, err, want)
		}
	}
	// Set directly, the reduction refuses before its first permutation.
	start := time.Now()
	_, err = permute.Permute{Repeats: 1e9}.Reduce(ctx, p, x1)
	if !errors.Is(err, framework.ErrUsage) || !strings.Contains(err.Error(), "1000000000 permutations of") || time.Since(start) > time.Second {
		t.Errorf("Repeats 1e9: %v after %v, want a usage error at once", err, time.Since(start))
	}
}

// vi's default combines three cross-fits of three folds by averaging each
// row's predictions over them and extrapolating in 1/M (inference's
// Ensemble and Debias). Averaging permute's reduced predictions over the
// repetitions would average their different permutations away and read as
// dropout's beta_1^2 Var(x1); permute declines the ensemble, so the
// default gives its own estimand, 2 beta_1^2 Var(x1) for x1 (4.5, here
// with the data set's own variance of x1, 0.894, which the evaluation
// rows' permutations see), and 0 for the null x4. Tolerance: 4 of the
// reported standard errors plus the least-squares coefficients' error, as
// TestPermuteClosedForm.
func TestPermuteEnsembleDefault(t *testing.T) {
	sim, err := simulate.Generate("linear", 1500, closedform.Rho, 7)
	if err != nil {
		t.Fatal(err)
	}
	d := &dataio.Dataset{Source: "linear", Names: sim.Names, X: sim.X}
	cfg := pipeline.Config{Backend: linear.Backend{}, BackendName: "linear", Seed: 7, CrossFit: 3, Repeats: 3}
	opt := pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Plain, Ensemble: true, Debias: true}}
	rep, err := pipeline.Run(context.Background(), d, cfg, measures.MSE(), []framework.Estimator{permute.Permute{Repeats: permute.DefaultRepeats}}, opt)
	if err != nil {
		t.Fatal(err)
	}
	res := map[string]inference.Result{}
	for _, r := range rep.Results {
		t.Logf("%s: vi %.4f se %.4f [%.4f, %.4f] p %.3g combined %q", r.Feature, r.VI, r.SE, r.CILow, r.CIHigh, r.PValue, r.Combined)
		res[r.Feature] = r
	}
	if sim.Names[0] != "x1" {
		t.Fatalf("columns %v, want x1 first", sim.Names)
	}
	want := 2 * closedform.Beta[0] * closedform.Beta[0] * stat.Variance(mat.Col(nil, 0, sim.X), nil)
	if r := res["x1"]; math.Abs(r.VI-want) > 4*r.SE+0.05*want {
		t.Errorf("x1: vi %.4f (se %.4f), want 2 beta_1^2 = %.4f (dropout's would be %.4f)", r.VI, r.SE, want, want/2)
	}
	if r := res["x4"]; math.Abs(r.VI) > 4*r.SE+0.01 {
		t.Errorf("x4: vi %.4f (se %.4f), want 0", r.VI, r.SE)
	}
	for _, r := range rep.Results {
		if r.Combined != inference.CombinedRepetitions {
			t.Errorf("%s: combined %q, want %q", r.Feature, r.Combined, inference.CombinedRepetitions)
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
