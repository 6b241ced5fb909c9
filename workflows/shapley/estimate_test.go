package shapley

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/estimators"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
)

// ols is a test backend: least squares with an intercept (a tiny ridge
// keeps the columns a reduced model zeroes at coefficient 0). With it,
// retrain's reduced model on S is the OLS fit on S, which converges to
// E[y | x_S] for a Gaussian linear model.
type ols struct{}

func (ols) Capabilities() framework.Capabilities { return framework.Capabilities{} }
func (ols) Options() []framework.OptionInfo      { return nil }
func (ols) New(context.Context, framework.ModelSpec) (framework.Model, error) {
	return &olsModel{}, nil
}

type olsModel struct{ coef []float64 }

func (m *olsModel) Fit(_ context.Context, x mat.Matrix, y []float64) error {
	n, p := x.Dims()
	d := mat.NewDense(n, p+1, nil)
	d.Slice(0, n, 1, p+1).(*mat.Dense).Copy(x)
	for i := range n {
		d.Set(i, 0, 1)
	}
	var g mat.SymDense
	g.SymOuterK(1, d.T())
	for j := range p + 1 {
		g.SetSym(j, j, g.At(j, j)+1e-9)
	}
	var b mat.VecDense
	b.MulVec(d.T(), mat.NewVecDense(n, y))
	var ch mat.Cholesky
	if !ch.Factorize(&g) {
		return fmt.Errorf("ols: singular normal matrix")
	}
	var c mat.VecDense
	if err := ch.SolveVecTo(&c, &b); err != nil {
		return err
	}
	m.coef = c.RawVector().Data
	return nil
}

func (m *olsModel) Predict(_ context.Context, x mat.Matrix) (*mat.Dense, error) {
	n, p := x.Dims()
	var f mat.VecDense
	f.MulVec(x, mat.NewVecDense(p, m.coef[1:]))
	out := mat.NewDense(n, 1, nil)
	for i := range n {
		out.Set(i, 0, m.coef[0]+f.AtVec(i))
	}
	return out, nil
}

// The Gaussian linear model of the exact test: x ~ N(0, Sigma), y = beta'x
// + eps, eps ~ N(0, sigma2). x4 has no coefficient but is correlated with
// x3, so its Shapley value is positive.
var (
	linBeta  = []float64{1, 0.5, 0.8, 0}
	linSigma = mat.NewSymDense(4, []float64{
		1, 0.7, 0.2, 0,
		0.7, 1, 0, 0,
		0.2, 0, 1, -0.5,
		0, 0, -0.5, 1,
	})
	linNoise = 0.6
)

// linearR2 is the population R² of E[y | x_S]: beta' Sigma_{.S}
// Sigma_SS^-1 Sigma_{S.} beta / Var(y).
func linearR2(mask uint32) float64 {
	b := mat.NewVecDense(len(linBeta), linBeta)
	var sb mat.VecDense
	sb.MulVec(linSigma, b) // Cov(x, y)
	vy := mat.Dot(b, &sb) + linNoise
	return explainedVar(linSigma, linBeta, mask) / vy
}

func linearData(n int, seed int64) *dataio.Dataset {
	p := len(linBeta)
	var ch mat.Cholesky
	ch.Factorize(linSigma)
	var l mat.TriDense
	ch.LTo(&l)
	rng := rand.New(rand.NewPCG(uint64(seed), 11))
	x := mat.NewDense(n, p+1, nil)
	z := make([]float64, p)
	for i := range n {
		for j := range z {
			z[j] = rng.NormFloat64()
		}
		y := math.Sqrt(linNoise) * rng.NormFloat64()
		for j := range p {
			v := 0.0
			for k := 0; k <= j; k++ {
				v += l.At(j, k) * z[k]
			}
			x.Set(i, j, v)
			y += linBeta[j] * v
		}
		x.Set(i, p, y)
	}
	return &dataio.Dataset{Source: "linear", Names: []string{"x1", "x2", "x3", "x4", "y"}, X: x}
}

func olsProblem(t *testing.T, n int, seed int64) *framework.Problem {
	t.Helper()
	prob, err := pipeline.Prepare(context.Background(), linearData(n, seed),
		pipeline.Config{Backend: ols{}, BackendName: "ols", Seed: seed, TrainFrac: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	return prob
}

// TestLinearR2Exact checks the closed-form Shapley values of R² (by
// enumerating the 16 subsets of the population model) against the
// estimator with OLS reduced models, and the standard errors' calibration
// over repetitions: the z-scores (estimate - truth)/se must have mean 0 and
// standard deviation 1 within Monte Carlo error (every subset: influence
// variance only; TestPairSamplingSECalibrated checks the sampling part).
func TestLinearR2Exact(t *testing.T) {
	truth, err := Definition(4, linearR2)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, v := range truth {
		sum += v
	}
	if math.Abs(sum-linearR2(15)) > 1e-12 {
		t.Fatalf("truth sums to %v, R² of the full model is %v", sum, linearR2(15))
	}
	t.Logf("population Shapley values of R²: %.4f (sum %.4f)", truth, sum)
	if truth[3] <= 0.01 {
		t.Fatalf("x4's Shapley value %v should be clearly positive", truth[3])
	}
	m := measures.R2()
	for _, tc := range []struct {
		name  string
		exact bool
		draws int
	}{{"exact", true, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			const reps = 200
			zs := make([][]float64, 4)
			for r := range reps {
				prob := olsProblem(t, 1000, int64(r+1))
				d, err := NewDesign(4, Stop{}, tc.exact, prob.Seed)
				if err != nil {
					t.Fatal(err)
				}
				est, err := Estimate(context.Background(), prob, m, prob.Features(), NewPlan(d), estimators.Retrain{}, Options{Workers: 1})
				if err != nil {
					t.Fatal(err)
				}
				s := 0.0
				for j, res := range est.Results {
					zs[j] = append(zs[j], (res.VI-truth[j])/res.SE)
					s += res.VI
					if tc.exact && res.SESampling != 0 {
						t.Fatalf("exact: sampling se %v", res.SESampling)
					}
				}
				if d := est.Full.Value - est.Empty.Value; math.Abs(s-d) > 1e-12 {
					t.Fatalf("efficiency: values sum to %v, V(full) - V(empty) = %v", s, d)
				}
				if r == 0 {
					for j, res := range est.Results {
						t.Logf("rep 1: %s %.4f se %.4f (influence %.4f, sampling %.4f), truth %.4f",
							res.Feature, res.VI, res.SE, res.SEInfluence, res.SESampling, truth[j])
					}
				}
			}
			for j, z := range zs {
				mean, sd := stat.MeanStdDev(z, nil)
				t.Logf("x%d: z-score mean %.3f, sd %.3f over %d repetitions", j+1, mean, sd, reps)
				// Mean within 4 Monte Carlo SEs (sd/sqrt(reps)) of 0 plus
				// an allowance for the O(1/n) bias of R² from estimated
				// regressions; sd within [0.8, 1.25] (the sd of an sd from
				// 200 normal draws is 0.05).
				if math.Abs(mean) > 4/math.Sqrt(reps)+0.15 {
					t.Errorf("x%d: mean z-score %.3f", j+1, mean)
				}
				if sd < 0.8 || sd > 1.25 {
					t.Errorf("x%d: z-score sd %.3f, want about 1", j+1, sd)
				}
			}
		})
	}
}

// blockProblem prepares n rows of a block design (half train, half
// evaluation) with the OLS backend.
func blockProblem(t *testing.T, d blockDesign, n int, seed int64) *framework.Problem {
	t.Helper()
	prob, err := pipeline.Prepare(context.Background(), d.dataset(n, seed),
		pipeline.Config{Backend: ols{}, BackendName: "ols", Seed: seed, TrainFrac: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	return prob
}

// TestBlockDesignsDefaults: with the default stopping, retrain's OLS reduced
// models on Gaussian block designs give Shapley values of R² within 4
// standard errors of the closed-form population values (p = 8: every
// subset; p = 20: sizes 1, 2, 18, 19 enumerated and the rest sampled until
// the rule holds), and the sampling converges.
func TestBlockDesignsDefaults(t *testing.T) {
	for _, d := range []blockDesign{design8, design20} {
		truth := d.truth()
		prob := blockProblem(t, d, 2000, 3)
		des, err := NewDesign(d.p(), Stop{}, false, 3)
		if err != nil {
			t.Fatal(err)
		}
		est, err := Estimate(context.Background(), prob, measures.R2(), prob.Features(), NewPlan(des), estimators.Retrain{}, Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		if !est.Converged || des.Exact != (d.p() <= 10) {
			t.Errorf("%s: converged %v (figure %v), exact %v", d.name, est.Converged, est.Figure, des.Exact)
		}
		mae, maxZ := 0.0, 0.0
		for j, r := range est.Results {
			z := (r.VI - truth[j]) / r.SE
			mae += math.Abs(r.VI-truth[j]) / float64(d.p())
			maxZ = math.Max(maxZ, math.Abs(z))
			if math.Abs(z) > 4 {
				t.Errorf("%s %s: %.4f ± %.4f (sampling %.4f), truth %.4f", d.name, r.Feature, r.VI, r.SE, r.SESampling, truth[j])
			}
		}
		t.Logf("%s: %d subsets (%d pairs), converged %v, figure %.4f; MAE %.4f, largest |z| %.2f", d.name, est.Subsets, est.Pairs, est.Converged, est.Figure, mae, maxZ)
	}
}

// TestOracleP50Converges runs the sampling on the R² game of the p = 50
// block design's population reduced models scored on 500 evaluation rows
// (the evaluation noise of an estimate, no model error), with the default
// rule and cap: it converges; the values are within 4.5 total SEs of the
// closed-form population values and within 4.5 sampling SEs of the exact
// Shapley values of the same estimated game (every subset, computed block by
// block); and the mean absolute error against the population values exceeds
// that of exact enumeration by at most twice the mean sampling SE (the
// difference is at most the mean |psi - psi_exact|, about 0.8 mean se).
func TestOracleP50Converges(t *testing.T) {
	d := design50
	truth := d.truth()
	g := newOracleGame(d, 500, 11)
	exact := g.exact()
	p := d.p()
	des, err := NewDesign(p, Stop{}, false, 11)
	if err != nil {
		t.Fatal(err)
	}
	o, err := converge(context.Background(), NewPlan(des), g.scorer(true), g.score(nil), g.score(Subset(seq(p))), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !o.converged || o.figure > DefaultRule.Threshold() {
		t.Errorf("not converged: figure %v after %d subsets", o.figure, len(o.scores))
	}
	var mae, maeX, meanSE float64
	for j := range p {
		psi := o.fit.Psi[j]
		if se := math.Hypot(o.seIF[j], o.seS[j]); math.Abs(psi-truth[j]) > 4.5*se {
			t.Errorf("x%d: %.4f ± %.4f, truth %.4f", j+1, psi, se, truth[j])
		}
		if math.Abs(psi-exact[j]) > 4.5*o.seS[j] {
			t.Errorf("x%d: %.4f, exact enumeration %.4f, sampling se %.4f", j+1, psi, exact[j], o.seS[j])
		}
		mae += math.Abs(psi-truth[j]) / float64(p)
		maeX += math.Abs(exact[j]-truth[j]) / float64(p)
		meanSE += o.seS[j] / float64(p)
	}
	t.Logf("%d subsets, figure %.4f; MAE %.5f, exact enumeration's %.5f, mean sampling se %.5f", len(o.scores), o.figure, mae, maeX, meanSE)
	if mae > maeX+2*meanSE {
		t.Errorf("MAE %.5f, exact enumeration's %.5f + 2 x mean sampling se %.5f", mae, maeX, meanSE)
	}
}

// TestWorkersDeterministic: the subsets drawn, the values and their
// standard errors do not depend on the number of workers.
func TestWorkersDeterministic(t *testing.T) {
	prob := blockProblem(t, design20, 600, 5)
	var first *Estimation
	for _, w := range []int{1, 3, 8} {
		des, _ := NewDesign(20, Stop{MaxSubsets: 700}, false, 5)
		est, err := Estimate(context.Background(), prob, measures.MSE(), prob.Features(), NewPlan(des), estimators.Retrain{}, Options{Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = est
			if est.Pairs <= MinPairs(20) {
				t.Fatalf("%d pairs: the test should sample past the floor", est.Pairs)
			}
			continue
		}
		if est.Subsets != first.Subsets || est.Pairs != first.Pairs || est.Figure != first.Figure {
			t.Errorf("workers %d: %d subsets, %d pairs, figure %v; with 1 worker %d, %d, %v", w, est.Subsets, est.Pairs, est.Figure, first.Subsets, first.Pairs, first.Figure)
		}
		for j := range est.Results {
			a, b := first.Results[j], est.Results[j]
			if a.VI != b.VI || a.SE != b.SE {
				t.Errorf("workers %d: %s %v±%v, with 1 worker %v±%v", w, a.Feature, b.VI, b.SE, a.VI, a.SE)
			}
		}
	}
}

// TestGroupsAndPValues: with groups as players the estimate is the Shapley
// value of the group game (closed form: the population R² of each union of
// groups), within 4 SE; the p-values are the one-sided ones of H0: psi <= 0
// and Holm's adjustment of them.
func TestGroupsAndPValues(t *testing.T) {
	d := design8
	prob := blockProblem(t, d, 2000, 7)
	groups := []dataio.Group{{Name: "block", Columns: []string{"x1", "x2", "x3"}}, {Name: "nulls", Columns: []string{"x7", "x8"}}}
	feats, err := dataio.ResolveFeatures(prob.FeatureNames, "y", groups, false)
	if err != nil {
		t.Fatal(err)
	}
	truth, err := Definition(len(feats), func(m uint32) float64 {
		var s Subset
		for k, f := range feats {
			if m&(1<<k) != 0 {
				s = append(s, f.Columns...)
			}
		}
		slices.Sort(s)
		return d.popR2(s)
	})
	if err != nil {
		t.Fatal(err)
	}
	des, _ := NewDesign(len(feats), Stop{}, false, 7)
	est, err := Estimate(context.Background(), prob, measures.R2(), feats, NewPlan(des), estimators.Retrain{}, Options{Workers: 2, Adjust: inference.AdjustHolm})
	if err != nil {
		t.Fatal(err)
	}
	if len(est.Results) != 5 || est.Results[0].Feature != "block" || est.Results[1].Feature != "nulls" || est.Results[2].Feature != "x4" {
		t.Fatalf("players %v", est.Results)
	}
	ps := make([]float64, len(est.Results))
	for j, r := range est.Results {
		if math.Abs(r.VI-truth[j]) > 4*r.SE {
			t.Errorf("%s: %.4f ± %.4f, truth %.4f", r.Feature, r.VI, r.SE, truth[j])
		}
		if want := inference.OneSidedPValue(r.VI, r.SE, 0); r.PValue != want {
			t.Errorf("%s: p-value %v, want %v", r.Feature, r.PValue, want)
		}
		ps[j] = r.PValue
	}
	for j, a := range inference.AdjustPValues(ps, inference.AdjustHolm) {
		if r := est.Results[j]; r.PAdjusted == nil || *r.PAdjusted != a {
			t.Errorf("%s: adjusted p-value %v, want %v", r.Feature, r.PAdjusted, a)
		}
	}
	if est.Results[0].PValue > 1e-6 || est.Results[1].PValue < 0.001 {
		t.Errorf("p-values: block %v (important), nulls %v", est.Results[0].PValue, est.Results[1].PValue)
	}
}

func TestEstimateErrors(t *testing.T) {
	prob := olsProblem(t, 200, 1)
	d3, _ := NewDesign(3, Stop{}, false, 1)
	if _, err := Estimate(context.Background(), prob, measures.MSE(), prob.Features(), NewPlan(d3), estimators.Retrain{}, Options{}); err == nil {
		t.Error("plan for 3 features on 4: no error")
	}
	d4, _ := NewDesign(4, Stop{}, false, 1)
	if _, err := Estimate(context.Background(), prob, measures.Accuracy(), prob.Features(), NewPlan(d4), estimators.Retrain{}, Options{}); err == nil {
		t.Error("accuracy on a regression: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Estimate(ctx, prob, measures.MSE(), prob.Features(), NewPlan(d4), estimators.Retrain{}, Options{}); err == nil {
		t.Error("cancelled context: no error")
	}
	// Subsets that leave values undetermined (a plan larger than its
	// design's check allows: 5 pairs for 30 features).
	prob30 := blockProblem(t, blockDesign{name: "p30", noise: 1, blocks: []block{{rho: 0.5, beta: make([]float64, 30)}}}, 200, 1)
	d30, err := NewDesign(30, Stop{Subsets: 100}, false, 1)
	if err != nil {
		t.Fatal(err)
	}
	d30.Stop.Subsets = 10
	if _, err := Estimate(context.Background(), prob30, measures.MSE(), prob30.Features(), NewPlan(d30), estimators.Retrain{}, Options{}); err == nil || !strings.Contains(err.Error(), "do not identify") {
		t.Errorf("10 subsets for 30 features: err = %v", err)
	}
}

// TestProgressForecast: the progress callback sees the subsets fitted grow
// and a total that is never below them (the forecast of the subsets
// needed), moving as the sampling goes, and ends at done = total = the
// subsets fitted.
func TestProgressForecast(t *testing.T) {
	d := design20
	g := newOracleGame(d, 300, 2)
	des, _ := NewDesign(d.p(), Stop{}, false, 2)
	type call struct{ done, total int }
	var calls []call
	o, err := converge(context.Background(), NewPlan(des), g.scorer(true), g.score(nil), g.score(Subset(seq(d.p()))), true,
		func(done, total int) { calls = append(calls, call{done, total}) })
	if err != nil {
		t.Fatal(err)
	}
	totals := map[int]bool{}
	for i, c := range calls {
		if c.total < c.done || i > 0 && c.done < calls[i-1].done {
			t.Fatalf("call %d: (%d, %d) after (%d, %d)", i, c.done, c.total, calls[i-1].done, calls[i-1].total)
		}
		totals[c.total] = true
	}
	last := calls[len(calls)-1]
	if n := len(o.scores); last.done != n || last.total != n {
		t.Errorf("last call (%d, %d), want (%d, %d)", last.done, last.total, n, n)
	}
	if len(totals) < 3 {
		t.Errorf("the forecast took %d values over %d calls; want it to move with the sampling", len(totals), len(calls))
	}
	t.Logf("%d calls, %d forecasts, %d subsets", len(calls), len(totals), len(o.scores))
}

// TestRunSharesSubsets: Run's first reduced model decides the subsets and
// the second is fitted on the same ones, drawing none, with its own figure.
func TestRunSharesSubsets(t *testing.T) {
	cfg := pipeline.Config{Backend: ols{}, BackendName: "ols", Seed: 4, TrainFrac: 0.5}
	rep, err := Run(context.Background(), design20.dataset(600, 4), cfg, measures.R2(),
		[]framework.Estimator{estimators.Retrain{}, estimators.Dropout{}}, RunOptions{Stop: Stop{MaxSubsets: 900}, Options: Options{Workers: 2}})
	if err != nil {
		t.Fatal(err)
	}
	a, b := rep.Estimators[0], rep.Estimators[1]
	if a.Subsets != b.Subsets || a.Pairs != b.Pairs || a.Subsets <= rep.Subsets.Enumerated || a.Subsets > 900 {
		t.Errorf("retrain %d subsets (%d pairs), dropout %d (%d); enumerated %d, cap 900", a.Subsets, a.Pairs, b.Subsets, b.Pairs, rep.Subsets.Enumerated)
	}
	if a.Figure == nil || b.Figure == nil || *a.Figure == *b.Figure {
		t.Errorf("figures %v and %v: each estimator reports its own", a.Figure, b.Figure)
	}
}
