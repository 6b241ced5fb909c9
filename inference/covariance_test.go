package inference_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
)

// condFixed is fixed with reduced models that are conditional means of
// the full model (framework.ConditionalMean), as cpi's are.
type condFixed struct{ fixed }

func (condFixed) ConditionalMean() bool { return true }

// covRows are 2 (y_i - g_i)(f_i - g_i), squared error's derivative along
// the line from the reduced model g to the reference f.
func covRows(y, f, g []float64) []float64 {
	t := make([]float64, len(y))
	for i := range t {
		t[i] = 2 * (y[i] - g[i]) * (f[i] - g[i])
	}
	return t
}

// TestCovarianceHandComputed checks the covariance test's p-values against
// the formulas computed here, for an estimator whose reduced model is a
// conditional mean (a refitted one keeps the estimate's test): on the ensemble's averaged predictions
// (the baseline against each reduced model, T = mean(t), se^2 = var(t)/n
// plus the spread of the repetitions' own statistics over M), on the
// repetitions without the ensemble (each the mean of its folds' means,
// combined as repeated runs), and that it leaves the estimate's test in
// place where it does not apply (a delta, split inference, accuracy).
func TestCovarianceHandComputed(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	m := measures.MSE()
	feats := []framework.Feature{{Name: "a", Columns: []int{0}}, {Name: "b", Columns: []int{0}}}
	const n, M = 30, 3
	reps, y, _, base, red, _, repBase, repRed := ensembleReps(rng, n, M, 3, feats)
	opt := inference.InferOptions{Inference: inference.Plain, Ensemble: true, Test: inference.TestCovariance}
	// An estimator whose reduced model is refitted keeps the estimate's
	// test.
	est, err := inference.InferRepeated(reps, m, inference.InferOptions{Inference: inference.Plain, Ensemble: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := inference.InferRepeated(reps, m, opt)
	if err != nil {
		t.Fatal(err)
	}
	for f := range res {
		if res[f].PValue != est[f].PValue || res[f].Test != "" {
			t.Errorf("refitted reduced model, feature %s: p %v test %q, want the estimate's %v", res[f].Feature, res[f].PValue, res[f].Test, est[f].PValue)
		}
	}
	for _, r := range reps {
		r.Estimators = []framework.Estimator{condFixed{r.Estimators[0].(fixed)}}
	}
	if res, err = inference.InferRepeated(reps, m, opt); err != nil {
		t.Fatal(err)
	}
	for f := range feats {
		tr := covRows(y, base, red[f])
		stats := make([]float64, M)
		for i := range stats {
			stats[i] = stat.Mean(covRows(y, repBase[i], repRed[i][f]), nil)
		}
		se := math.Sqrt(stat.Variance(tr, nil)/n + stat.Variance(stats, nil)/M)
		want := distuv.UnitNormal.Survival(stat.Mean(tr, nil) / se)
		if got := res[f].PValue; !scalar.EqualWithinAbsOrRel(got, want, 1e-12, 1e-10) || res[f].Test != "covariance" {
			t.Errorf("ensemble, feature %s: p %v test %q, want %v covariance", feats[f].Name, got, res[f].Test, want)
		}
	}

	// Without the ensemble: each repetition's statistic is the mean of
	// its folds' means, its variance the mean of theirs over n.
	opt.Ensemble = false
	res, err = inference.InferRepeated(reps, m, opt)
	if err != nil {
		t.Fatal(err)
	}
	for f := range feats {
		stats, vars := make([]float64, M), 0.0
		for i, r := range reps {
			for k, p := range r.Folds {
				tr := covRows(p.YEval, r.Base[k][0].Pred.RawMatrix().Data, r.Reduced[k][0][f].Pred.RawMatrix().Data)
				stats[i] += stat.Mean(tr, nil) / 3
				vars += stat.Variance(tr, nil) / 3 / n / M
			}
		}
		want := distuv.UnitNormal.Survival(stat.Mean(stats, nil) / math.Sqrt(vars+stat.Variance(stats, nil)/M))
		if got := res[f].PValue; !scalar.EqualWithinAbsOrRel(got, want, 1e-12, 1e-10) {
			t.Errorf("repetitions, feature %s: p %v, want %v", feats[f].Name, got, want)
		}
	}

	// Where it does not apply, the p-values are the estimate's.
	for _, c := range []struct {
		name string
		opt  inference.InferOptions
	}{
		{"delta", inference.InferOptions{Inference: inference.Plain, Ensemble: true, Delta: 0.01}},
		{"split", inference.InferOptions{Inference: inference.Split, Ensemble: true}},
	} {
		est, err := inference.InferRepeated(reps, m, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		c.opt.Test = inference.TestCovariance
		cov, err := inference.InferRepeated(reps, m, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		if inference.TestFor(c.opt, m) != inference.TestEstimate {
			t.Errorf("%s: TestFor says %s", c.name, inference.TestFor(c.opt, m))
		}
		for f := range est {
			if est[f].PValue != cov[f].PValue {
				t.Errorf("%s, feature %s: p %v with the covariance test asked, %v without", c.name, est[f].Feature, cov[f].PValue, est[f].PValue)
			}
		}
	}
	if got := inference.TestFor(inference.InferOptions{Inference: inference.Plain, Test: inference.TestCovariance}, measures.Accuracy()); got != inference.TestEstimate {
		t.Errorf("accuracy: TestFor says %s", got)
	}
}

// nullDraw is one data set of n rows where the response depends on x2
// alone and x1 is correlated with x2 (rho 0.8): y = x2 + N(0, 1). The
// models were fitted elsewhere (independent of the rows' noise, as
// cross-fitted models are): the full model f = b x2 + c (x1 - 0.8 x2),
// b = 1 + N(0, 0.05^2) and c ~ N(0, 0.08^2) the noise it fitted through
// x1, and the reduced model its mean given x2, g = b x2, as cpi's
// conditional sampler makes it. With beta, y gains beta (x1 - 0.8 x2) and
// the full model learned it: c is beta + N(0, 0.08^2).
func nullDraw(t *testing.T, rng *rand.Rand, n int, beta float64) *inference.Reductions {
	t.Helper()
	b, c := 1+0.05*rng.NormFloat64(), beta+0.08*rng.NormFloat64()
	y, f, g := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range y {
		x2 := rng.NormFloat64()
		r1 := 0.6 * rng.NormFloat64() // x1 - 0.8 x2
		y[i] = x2 + beta*r1 + rng.NormFloat64()
		g[i] = b * x2
		f[i] = g[i] + c*r1
	}
	p := fold(y, f)
	est := condFixed{fixed{map[*framework.Problem]*mat.Dense{p: mat.NewDense(n, 1, g)}}}
	feats := []framework.Feature{{Name: "x1", Columns: []int{0}}}
	r, err := pipeline.Reduce(context.Background(), []*framework.Problem{p}, []framework.Estimator{est}, feats, pipeline.ReduceOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCovariancePValueUniformUnderNull: where the response does not depend
// on x1 given x2, the covariance test's p-values are uniform over 1000
// data sets (share below 0.05 within 3 binomial standard errors of 0.05,
// KS distance below the 1% critical value), while the paired estimate's
// own test, drawn down by -mean((f - g)^2), is conservative: it rejects
// less than 0.05 by more than 3 binomial standard errors (0.024 here).
func TestCovariancePValueUniformUnderNull(t *testing.T) {
	rng := rand.New(rand.NewPCG(73, 74))
	m := measures.MSE()
	const reps, n = 1000, 300
	cov, est := make([]float64, 0, reps), 0
	for range reps {
		r := nullDraw(t, rng, n, 0)
		res, err := r.Infer(m, inference.InferOptions{Inference: inference.Plain, Test: inference.TestCovariance})
		if err != nil {
			t.Fatal(err)
		}
		cov = append(cov, res[0].PValue)
		plain, err := r.Infer(m, inference.InferOptions{Inference: inference.Plain})
		if err != nil {
			t.Fatal(err)
		}
		if plain[0].PValue < 0.05 {
			est++
		}
	}
	checkUniform(t, "covariance", cov)
	share, lim := float64(est)/reps, 0.05-3*math.Sqrt(0.05*0.95/reps)
	t.Logf("the estimate's test rejects %.3f", share)
	if share > lim {
		t.Errorf("the estimate's test rejects %.3f of the nulls, want the conservative test's < %.3f", share, lim)
	}
}

// TestCovariancePower: where y gains 0.15 (x1 - 0.8 x2) and the full model
// learned it, the covariance test rejects at 5% in more data sets than
// the paired estimate's test, by more than 3 standard errors of the
// difference of the two shares (400 data sets; 0.477 against 0.223 here,
// their z differing by about a factor 2).
func TestCovariancePower(t *testing.T) {
	rng := rand.New(rand.NewPCG(75, 76))
	m := measures.MSE()
	const reps, n = 400, 300
	cov, est := 0, 0
	for range reps {
		r := nullDraw(t, rng, n, 0.15)
		for _, o := range []inference.InferOptions{{Inference: inference.Plain, Test: inference.TestCovariance}, {Inference: inference.Plain}} {
			res, err := r.Infer(m, o)
			if err != nil {
				t.Fatal(err)
			}
			if res[0].PValue < 0.05 && o.Test == inference.TestCovariance {
				cov++
			} else if res[0].PValue < 0.05 {
				est++
			}
		}
	}
	pc, pe := float64(cov)/reps, float64(est)/reps
	se := math.Sqrt((pc*(1-pc) + pe*(1-pe)) / reps)
	t.Logf("power: covariance %.3f, estimate %.3f (se of the difference %.3f)", pc, pe, se)
	if pc-pe < 3*se {
		t.Errorf("power: covariance %.3f, estimate %.3f: want the covariance test ahead by 3 se (%.3f)", pc, pe, 3*se)
	}
}
