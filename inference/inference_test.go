package inference_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"
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

// fixed is an estimator whose reduced predictions are given per problem.
type fixed struct {
	pred map[*framework.Problem]*mat.Dense
}

func (fixed) Name() string { return "fixed" }
func (e fixed) Reduce(_ context.Context, p *framework.Problem, _ framework.Feature) (framework.Reduced, error) {
	return framework.Reduced{Pred: e.pred[p], Stats: map[string]float64{"k": float64(len(p.YEval))}}, nil
}

// Summarize reports the folds' stats in order.
func (fixed) Summarize(stats []map[string]float64) []framework.Field {
	var ks []float64
	for _, s := range stats {
		ks = append(ks, s["k"])
	}
	return []framework.Field{{Key: "k", Value: ks}}
}

// fold is a Problem with only what inference reads.
func fold(y, full []float64) *framework.Problem {
	return &framework.Problem{YEval: y, FullEval: mat.NewDense(len(full), 1, full), XEval: mat.NewDense(len(y), 1, nil)}
}

func sqErr(y, f []float64) []float64 {
	out := make([]float64, len(y))
	for i := range y {
		out[i] = (y[i] - f[i]) * (y[i] - f[i])
	}
	return out
}

func randVec(rng *rand.Rand, n int, scale float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = scale * rng.NormFloat64()
	}
	return v
}

// TestInferHandComputed checks plain and split inference, with one fold and
// cross-fitted, against the formulas computed here from squared errors.
func TestInferHandComputed(t *testing.T) {
	mk := handFolds(rand.New(rand.NewPCG(7, 8)))
	m := measures.MSE()
	feats := []framework.Feature{{Name: "x", Columns: []int{0}}}
	mse := func(l []float64) float64 { return stat.Mean(l, nil) }
	vr := func(l []float64) float64 { return stat.Variance(l, nil) }
	z := distuv.UnitNormal.Quantile(0.975)

	// One fold of 21 rows: halves of 11 and 10.
	p, red := mk(21)
	est := fixed{map[*framework.Problem]*mat.Dense{p: mat.NewDense(21, 1, red)}}
	r, err := pipeline.Reduce(context.Background(), []*framework.Problem{p}, []framework.Estimator{est}, feats, pipeline.ReduceOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	lf, lr := sqErr(p.YEval, mat.Col(nil, 0, p.FullEval)), sqErr(p.YEval, red)
	d := make([]float64, 21)
	for i := range d {
		d[i] = lr[i] - lf[i]
	}
	type want struct{ vi, se float64 }
	cases := []struct {
		name string
		inf  inference.Inference
		want want
	}{
		{"plain", inference.Plain, want{mse(lr) - mse(lf), math.Sqrt(vr(d) / 21)}},
		{"split", inference.Split, want{mse(lr[11:]) - mse(lf[:11]), math.Sqrt(vr(lf[:11])/11 + vr(lr[11:])/10)}},
	}
	for _, c := range cases {
		res, err := r.Infer(m, inference.InferOptions{Inference: c.inf})
		if err != nil {
			t.Fatal(err)
		}
		g := res[0]
		if !scalar.EqualWithinAbsOrRel(g.VI, c.want.vi, 1e-12, 1e-12) || !scalar.EqualWithinAbsOrRel(g.SE, c.want.se, 1e-12, 1e-12) {
			t.Errorf("%s: want vi %v se %v, got vi %v se %v", c.name, c.want.vi, c.want.se, g.VI, g.SE)
		}
		if !scalar.EqualWithinAbsOrRel(g.CILow, g.VI-z*g.SE, 1e-12, 1e-12) || !scalar.EqualWithinAbsOrRel(g.CIHigh, g.VI+z*g.SE, 1e-12, 1e-12) {
			t.Errorf("%s: interval [%v, %v] is not vi -+ 1.96 se", c.name, g.CILow, g.CIHigh)
		}
		if pv := 1 - distuv.UnitNormal.CDF(g.VI/g.SE); !scalar.EqualWithinAbsOrRel(g.PValue, pv, 1e-12, 1e-9) {
			t.Errorf("%s: p-value %v, want %v", c.name, g.PValue, pv)
		}
		if k, _ := g.Get("k"); fmt.Sprint(k) != "[21]" {
			t.Errorf("%s: stats %v, want [21] (the one fold's)", c.name, k)
		}
	}
}

// handFolds returns a maker of folds of n rows with the full model's and a
// reduced model's predictions, from rng.
func handFolds(rng *rand.Rand) func(n int) (*framework.Problem, []float64) {
	return func(n int) (*framework.Problem, []float64) {
		y := randVec(rng, n, 1)
		full, red := make([]float64, n), make([]float64, n)
		for i := range y {
			full[i] = 0.8*y[i] + 0.1*rng.NormFloat64()
			red[i] = 0.5*y[i] + 0.3*rng.NormFloat64()
		}
		return fold(y, full), red
	}
}

// TestInferHandComputedCrossFit is TestInferHandComputed with three
// cross-fitting folds, and with SplitOnly reductions.
func TestInferHandComputedCrossFit(t *testing.T) {
	mk := handFolds(rand.New(rand.NewPCG(7, 9)))
	m := measures.MSE()
	feats := []framework.Feature{{Name: "x", Columns: []int{0}}}
	mse := func(l []float64) float64 { return stat.Mean(l, nil) }
	vr := func(l []float64) float64 { return stat.Variance(l, nil) }
	type want struct{ vi, se float64 }
	// Three cross-fitting folds of 10, 11, 12 rows.
	var folds []*framework.Problem
	est := fixed{map[*framework.Problem]*mat.Dense{}}
	var lfs, lrs [][]float64
	for _, n := range []int{10, 11, 12} {
		p, red := mk(n)
		folds = append(folds, p)
		est.pred[p] = mat.NewDense(n, 1, red)
		lfs = append(lfs, sqErr(p.YEval, mat.Col(nil, 0, p.FullEval)))
		lrs = append(lrs, sqErr(p.YEval, red))
	}
	r, err := pipeline.Reduce(context.Background(), folds, []framework.Estimator{est}, feats, pipeline.ReduceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var plainVI, plainVar float64
	for k := range 3 {
		d := make([]float64, len(lfs[k]))
		for i := range d {
			d[i] = lrs[k][i] - lfs[k][i]
		}
		plainVI += (mse(lrs[k]) - mse(lfs[k])) / 3
		plainVar += vr(d) / 3
	}
	// Split: folds 1 and 3 score the full model (22 rows), fold 2 the
	// reduced (11 rows).
	splitVI := mse(lrs[1]) - (mse(lfs[0])+mse(lfs[2]))/2
	splitSE := math.Sqrt((vr(lfs[0])+vr(lfs[2]))/2/22 + vr(lrs[1])/11)
	for _, c := range []struct {
		name string
		inf  inference.Inference
		want want
	}{
		{"crossfit plain", inference.Plain, want{plainVI, math.Sqrt(plainVar / 33)}},
		{"crossfit split", inference.Split, want{splitVI, splitSE}},
	} {
		res, err := r.Infer(m, inference.InferOptions{Inference: c.inf})
		if err != nil {
			t.Fatal(err)
		}
		g := res[0]
		if !scalar.EqualWithinAbsOrRel(g.VI, c.want.vi, 1e-12, 1e-12) || !scalar.EqualWithinAbsOrRel(g.SE, c.want.se, 1e-12, 1e-12) {
			t.Errorf("%s: want vi %v se %v, got vi %v se %v", c.name, c.want.vi, c.want.se, g.VI, g.SE)
		}
		if k, _ := g.Get("k"); fmt.Sprint(k) != "[10 11 12]" {
			t.Errorf("%s: stats %v, want the folds' [10 11 12] in order", c.name, k)
		}
	}
	if res, err := r.Infer(m, inference.InferOptions{}); err != nil || fmt.Sprint(res[0].Extra) == "" {
		t.Fatal(err)
	}
	// SplitOnly skips folds 1 and 3: split still works, plain does not.
	r, err = pipeline.Reduce(context.Background(), folds, []framework.Estimator{est}, feats, pipeline.ReduceOptions{SplitOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Reduced[0][0][0].Pred != nil || r.Reduced[1][0][0].Pred == nil {
		t.Error("SplitOnly: want only fold 2 reduced")
	}
	if res, err := r.Infer(m, inference.InferOptions{Inference: inference.Split}); err != nil || !scalar.EqualWithinAbsOrRel(res[0].SE, splitSE, 1e-12, 1e-12) {
		t.Errorf("SplitOnly split: %v, %v", res, err)
	}
	if _, err := r.Infer(m, inference.InferOptions{Inference: inference.Plain}); err == nil {
		t.Error("SplitOnly plain: want an error")
	}
	// Truncation floors the interval, not the estimate.
	res, err := r.Infer(m, inference.InferOptions{Inference: inference.Split, CITruncate: true, Level: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].CILow < 0 || res[0].CIHigh < 0 || !scalar.EqualWithinAbsOrRel(res[0].VI, splitVI, 1e-12, 1e-12) {
		t.Errorf("truncated: %+v", res[0])
	}
}

// noiseOf is the perturbation the documentation of InferOptions promises
// for the feature named name and data-set row: a standard normal from the
// PCG stream keyed by (seed ^ FNV-1a-64(name), row).
func noiseOf(seed int64, name string, row int) float64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(uint64(seed)^h.Sum64(), uint64(row))).NormFloat64()
}

// TestInferPerturbedHandComputed checks perturbed inference, with one fold
// and cross-fitted, against the formulas computed here: VI = mean_k
// [V_k(full) - V_k(reduced) + rho s_k mean_k(eps)], se^2 = mean_k
// (var_k(d) + rho^2 s_k^2)/n, s_k = sd_k(IF_full) = sd of fold k's squared
// errors, eps keyed by the rows' indices in the data set.
func TestInferPerturbedHandComputed(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	m := measures.MSE()
	feats := []framework.Feature{{Name: "a", Columns: []int{0}}, {Name: "b", Columns: []int{0}}}
	const seed, rho = 42, 0.7
	var folds []*framework.Problem
	est := fixed{map[*framework.Problem]*mat.Dense{}}
	var lfs, lrs [][]float64
	var rows [][]int
	next := 100
	for _, n := range []int{9, 10, 12} {
		y := randVec(rng, n, 1)
		full, red := make([]float64, n), make([]float64, n)
		idx := make([]int, n)
		for i := range y {
			full[i] = 0.8*y[i] + 0.1*rng.NormFloat64()
			red[i] = 0.5*y[i] + 0.3*rng.NormFloat64()
			idx[i] = next
			next += 3 // any distinct indices
		}
		p := fold(y, full)
		p.EvalRows = idx
		folds = append(folds, p)
		est.pred[p] = mat.NewDense(n, 1, red)
		lfs = append(lfs, sqErr(y, full))
		lrs = append(lrs, sqErr(y, red))
		rows = append(rows, idx)
	}
	// want computes feature f's VI and se over the folds ks.
	want := func(f int, ks []int) (vi, se float64) {
		var v2 float64
		n := 0
		for _, k := range ks {
			d := make([]float64, len(lfs[k]))
			var eps float64
			for i := range d {
				d[i] = lrs[k][i] - lfs[k][i]
				eps += noiseOf(seed, feats[f].Name, rows[k][i])
			}
			eps /= float64(len(d))
			s := stat.StdDev(lfs[k], nil)
			vi += stat.Mean(lrs[k], nil) - stat.Mean(lfs[k], nil) + rho*s*eps
			v2 += stat.Variance(d, nil) + rho*rho*s*s
			n += len(d)
		}
		K := float64(len(ks))
		return vi / K, math.Sqrt(v2 / K / float64(n))
	}
	opt := inference.InferOptions{Inference: inference.Perturbed, Perturb: rho, Seed: seed}
	for _, c := range []struct {
		name  string
		folds []int
	}{{"one fold", []int{1}}, {"three folds", []int{0, 1, 2}}} {
		var ps []*framework.Problem
		for _, k := range c.folds {
			ps = append(ps, folds[k])
		}
		r, err := pipeline.Reduce(context.Background(), ps, []framework.Estimator{est}, feats, pipeline.ReduceOptions{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		res, err := r.Infer(m, opt)
		if err != nil {
			t.Fatal(err)
		}
		for f := range feats {
			vi, se := want(f, c.folds)
			if g := res[f]; !scalar.EqualWithinAbsOrRel(g.VI, vi, 1e-12, 1e-12) || !scalar.EqualWithinAbsOrRel(g.SE, se, 1e-12, 1e-12) {
				t.Errorf("%s, feature %d: want vi %v se %v, got vi %v se %v", c.name, f, vi, se, g.VI, g.SE)
			}
		}
		if res[0].VI == res[1].VI {
			t.Errorf("%s: two features share their noise (vi %v)", c.name, res[0].VI)
		}
	}
}

// TestInferRepeatedHandComputed: two repetitions (one fold each) combine
// into VI = mean VI_m and se^2 = mean se_m^2 + var(VI_m)/2; one repetition
// is Infer.
func TestInferRepeatedHandComputed(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	m := measures.MSE()
	feats := []framework.Feature{{Name: "x", Columns: []int{0}}}
	var reps []*inference.Reductions
	for _, n := range []int{20, 25} {
		y := randVec(rng, n, 1)
		full, red := make([]float64, n), make([]float64, n)
		for i := range y {
			full[i] = 0.8*y[i] + 0.1*rng.NormFloat64()
			red[i] = 0.4*y[i] + 0.3*rng.NormFloat64()
		}
		p := fold(y, full)
		r, err := pipeline.Reduce(context.Background(), []*framework.Problem{p},
			[]framework.Estimator{fixed{map[*framework.Problem]*mat.Dense{p: mat.NewDense(n, 1, red)}}}, feats, pipeline.ReduceOptions{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, r)
	}
	opt := inference.InferOptions{Inference: inference.Split}
	var vis, ses []float64
	for _, r := range reps {
		res, err := r.Infer(m, opt)
		if err != nil {
			t.Fatal(err)
		}
		vis, ses = append(vis, res[0].VI), append(ses, res[0].SE)
	}
	vi := (vis[0] + vis[1]) / 2
	d := vis[0] - vis[1]
	within := (ses[0]*ses[0] + ses[1]*ses[1]) / 2
	se := math.Sqrt(within + d*d/2/2)
	res, err := inference.InferRepeated(reps, m, opt)
	if err != nil {
		t.Fatal(err)
	}
	if g := res[0]; !scalar.EqualWithinAbsOrRel(g.VI, vi, 1e-12, 1e-12) || !scalar.EqualWithinAbsOrRel(g.SE, se, 1e-12, 1e-12) {
		t.Errorf("want vi %v se %v, got vi %v se %v", vi, se, g.VI, g.SE)
	}
	// The summary sees every repetition's fold, in order (20 rows, then 25).
	if g := res[0]; len(g.Extra) != 1 || fmt.Sprint(g.Extra[0].Value) != "[20 25]" {
		t.Errorf("extra %v, want k [20 25] (both repetitions' stats)", g.Extra)
	}
	one, err := inference.InferRepeated(reps[:1], m, opt)
	if err != nil || one[0].VI != vis[0] || one[0].SE != ses[0] {
		t.Errorf("one repetition: %+v, %v; want vi %v se %v", one, err, vis[0], ses[0])
	}
	if inference.RepeatSeed(7, 0) != 7 || inference.RepeatSeed(7, 1) == 7 || inference.RepeatSeed(7, 1) == inference.RepeatSeed(7, 2) {
		t.Error("RepeatSeed: want seed itself for the first repetition and distinct seeds after")
	}
	for _, rho := range []float64{-1, inference.MaxPerturb * 1.01, 1e300, math.Inf(1), math.NaN()} {
		if _, err := inference.InferRepeated(reps, m, inference.InferOptions{Inference: inference.Perturbed, Perturb: rho}); err == nil {
			t.Errorf("perturbation %g: want an error", rho)
		}
	}
}

func TestAdjustPValuesTextbook(t *testing.T) {
	cases := []struct {
		p, holm, bh []float64
	}{
		// R: p.adjust(c(.01,.02,.03,.04,.05), "holm") and "BH".
		{[]float64{.01, .02, .03, .04, .05}, []float64{.05, .08, .09, .09, .09}, []float64{.05, .05, .05, .05, .05}},
		// Unsorted, m = 4: sorted .005 .01 .03 .04; Holm 4p, 3p, 2p, p with
		// running max: .02 .03 .06 .06; BH 4p/1, 4p/2, 4p/3, 4p/4 with
		// running min from the top: .02 .02 .04 .04.
		{[]float64{.01, .04, .03, .005}, []float64{.03, .06, .06, .02}, []float64{.02, .04, .04, .02}},
		// Capped at 1.
		{[]float64{.5, .6}, []float64{1, 1}, []float64{.6, .6}},
	}
	for i, c := range cases {
		for _, a := range []struct {
			adj  inference.Adjust
			want []float64
		}{{inference.AdjustHolm, c.holm}, {inference.AdjustBH, c.bh}, {inference.AdjustNone, c.p}} {
			got := inference.AdjustPValues(c.p, a.adj)
			for k := range got {
				if !scalar.EqualWithinAbs(got[k], a.want[k], 1e-12) {
					t.Errorf("Case %d %s: want %v, got %v", i, a.adj, a.want, got)
					break
				}
			}
		}
	}
	if inference.OneSidedPValue(0.1, 0, 0) != 0 || inference.OneSidedPValue(0, 0, 0) != 1 {
		t.Error("se 0: want 0 above delta, 1 at or below")
	}
	if p := inference.OneSidedPValue(0.3, 0.1, 0.1); !scalar.EqualWithinAbs(p, 1-distuv.UnitNormal.CDF(2), 1e-12) {
		t.Errorf("delta 0.1: p %v", p)
	}
}

// TestPValueUniformUnderNull: a feature without importance (the reduced
// model predicts what the full model does, both imperfect) tested 1000
// times. Split inference's p-values are uniform: the share below 0.05 is
// 0.05 within 3 binomial standard errors (0.021), and a Kolmogorov-Smirnov
// distance below 1.63/sqrt(1000) (the 1% critical value). Plain inference
// degenerates (se 0, p 1).
func TestPValueUniformUnderNull(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	m := measures.MSE()
	const reps, n = 1000, 200
	ps := make([]float64, 0, reps)
	for range reps {
		r := degenerateNull(t, rng, n)
		res, err := r.Infer(m, inference.InferOptions{Inference: inference.Split})
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, res[0].PValue)
		if plain, _ := r.Infer(m, inference.InferOptions{Inference: inference.Plain}); plain[0].SE != 0 || plain[0].PValue != 1 {
			t.Fatalf("plain: want se 0 and p 1, got %+v", plain[0])
		}
	}
	checkUniform(t, "split", ps)
}

// TestPerturbedPValueUniformUnderNull: where the reduced model predicts
// exactly what the full model does (the degenerate null that collapses
// plain inference), perturbed inference's p-values are uniform: the share
// below 0.05 is 0.05 within 3 binomial standard errors and the KS distance
// is below the 1% critical value, over 1000 seeds.
func TestPerturbedPValueUniformUnderNull(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	m := measures.MSE()
	const reps, n = 1000, 200
	ps := make([]float64, 0, reps)
	for r := range reps {
		red := degenerateNull(t, rng, n)
		res, err := red.Infer(m, inference.InferOptions{Inference: inference.Perturbed, Seed: int64(r)})
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, res[0].PValue)
	}
	checkUniform(t, "perturbed", ps)
}

// checkUniform checks p-values that should be uniform: the share below
// 0.05 is 0.05 within 3 binomial standard errors, and the KS distance to
// the uniform distribution is below its 1% critical value.
func checkUniform(t *testing.T, name string, ps []float64) {
	t.Helper()
	reps := float64(len(ps))
	below := 0
	for _, p := range ps {
		if p < 0.05 {
			below++
		}
	}
	share := float64(below) / reps
	ks := ksUniform(ps)
	t.Logf("%s p-values under the null: share below 0.05 = %.3f, KS distance %.4f", name, share, ks)
	if math.Abs(share-0.05) > 3*math.Sqrt(0.05*0.95/reps) {
		t.Errorf("%s: share below 0.05 = %.3f, want 0.05 +- %.3f", name, share, 3*math.Sqrt(0.05*0.95/reps))
	}
	if ks > 1.63/math.Sqrt(reps) {
		t.Errorf("%s: KS distance to uniform %.4f > %.4f", name, ks, 1.63/math.Sqrt(reps))
	}
}

func ksUniform(p []float64) float64 {
	s := append([]float64(nil), p...)
	sort.Float64s(s)
	var d float64
	n := float64(len(s))
	for i, v := range s {
		d = math.Max(d, math.Max(float64(i+1)/n-v, v-float64(i)/n))
	}
	return d
}

// degenerateNull reduces one draw of n rows whose reduced model predicts
// exactly what the full model does: the degenerate null of the p-value
// tests.
func degenerateNull(t *testing.T, rng *rand.Rand, n int) *inference.Reductions {
	t.Helper()
	x := randVec(rng, n, 1)
	y, f := make([]float64, n), make([]float64, n)
	for i := range y {
		y[i] = x[i] + 0.3*rng.NormFloat64()
		f[i] = 0.9*x[i] + 0.05
	}
	p := fold(y, f)
	est := fixed{map[*framework.Problem]*mat.Dense{p: mat.NewDense(n, 1, f)}}
	feats := []framework.Feature{{Name: "x4", Columns: []int{0}}}
	r, err := pipeline.Reduce(context.Background(), []*framework.Problem{p}, []framework.Estimator{est}, feats, pipeline.ReduceOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	return r
}
