package framework_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/measures"
)

// baselined is fixed with a Baseliner: its baseline predictions are given
// per problem, and it counts how often they are asked for.
type baselined struct {
	fixed
	base  map[*framework.Problem]*mat.Dense
	calls *int
}

func (e baselined) Baseline(_ context.Context, p *framework.Problem) (framework.Reduced, error) {
	*e.calls++
	return framework.Reduced{Pred: e.base[p]}, nil
}

// TestInferBaseline: with ReduceOptions.EstimatorBaselines, a Baseliner's reduced
// models are scored against its baseline (plain and split, one fold and
// cross-fitted: the formulas of TestInferHandComputed with the baseline's
// squared errors for the full model's; the baseline's score reported as
// baseline_score), a reduced model equal to the
// baseline has VI 0 exactly, the baselines are computed once per fold
// that scores a full model, and without the option nothing changes.
func TestInferBaseline(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m := measures.MSE()
	feats := []framework.Feature{{Name: "x", Columns: []int{0}}, {Name: "same", Columns: []int{0}}}
	type data struct {
		p         *framework.Problem
		red, base []float64
	}
	mk := func(n int) data {
		y := randVec(rng, n, 1)
		full, red, base := make([]float64, n), make([]float64, n), make([]float64, n)
		for i := range y {
			full[i] = 0.6*y[i] + 0.3*rng.NormFloat64()
			base[i] = 0.8*y[i] + 0.1*rng.NormFloat64() // the procedure improves the full model
			red[i] = 0.5*y[i] + 0.3*rng.NormFloat64()
		}
		return data{fold(y, full), red, base}
	}
	mse := func(l []float64) float64 { return stat.Mean(l, nil) }
	vr := func(l []float64) float64 { return stat.Variance(l, nil) }
	sub := func(a, b []float64) []float64 {
		d := make([]float64, len(a))
		for i := range d {
			d[i] = a[i] - b[i]
		}
		return d
	}
	build := func(ds []data) (baselined, []*framework.Problem) {
		est := baselined{fixed: fixed{map[*framework.Problem]*mat.Dense{}}, base: map[*framework.Problem]*mat.Dense{}, calls: new(int)}
		var ps []*framework.Problem
		for _, d := range ds {
			est.pred[d.p] = mat.NewDense(len(d.red), 1, d.red)
			est.base[d.p] = mat.NewDense(len(d.base), 1, d.base)
			ps = append(ps, d.p)
		}
		return est, ps
	}
	check := func(name string, got framework.Result, vi, se float64) {
		t.Helper()
		if !scalar.EqualWithinAbsOrRel(got.VI, vi, 1e-12, 1e-12) || !scalar.EqualWithinAbsOrRel(got.SE, se, 1e-12, 1e-12) {
			t.Errorf("%s: vi %v se %v, want %v %v", name, got.VI, got.SE, vi, se)
		}
	}
	// checkBase: the result reports the baseline's score (mse's value is
	// -MSE), or none.
	checkBase := func(name string, got framework.Result, want float64, has bool) {
		t.Helper()
		v, ok := got.Get("baseline_score")
		if ok != has || (has && !scalar.EqualWithinAbsOrRel(v.(float64), want, 1e-12, 1e-12)) {
			t.Errorf("%s: baseline_score %v (present %v), want %v (present %v)", name, v, ok, want, has)
		}
	}

	// One fold of 21 rows.
	d := mk(21)
	est, ps := build([]data{d})
	r, err := framework.Reduce(context.Background(), ps, []framework.Estimator{est}, feats[:1], framework.ReduceOptions{Workers: 2, EstimatorBaselines: true})
	if err != nil {
		t.Fatal(err)
	}
	if *est.calls != 1 {
		t.Errorf("one fold: %d baselines computed, want 1", *est.calls)
	}
	lb, lr, lf := sqErr(d.p.YEval, d.base), sqErr(d.p.YEval, d.red), sqErr(d.p.YEval, mat.Col(nil, 0, d.p.FullEval))
	res, err := r.Infer(m, framework.InferOptions{Inference: framework.Plain})
	if err != nil {
		t.Fatal(err)
	}
	check("plain", res[0], mse(lr)-mse(lb), math.Sqrt(vr(sub(lr, lb))/21))
	checkBase("plain", res[0], -mse(lb), true)
	res, err = r.Infer(m, framework.InferOptions{Inference: framework.Split})
	if err != nil {
		t.Fatal(err)
	}
	check("split", res[0], mse(lr[11:])-mse(lb[:11]), math.Sqrt(vr(lb[:11])/11+vr(lr[11:])/10))
	checkBase("split", res[0], -mse(lb[:11]), true)

	// Without the option: scored against the full model.
	r0, err := framework.Reduce(context.Background(), ps, []framework.Estimator{est}, feats[:1], framework.ReduceOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	res, err = r0.Infer(m, framework.InferOptions{Inference: framework.Plain})
	if err != nil {
		t.Fatal(err)
	}
	check("plain without baselines", res[0], mse(lr)-mse(lf), math.Sqrt(vr(sub(lr, lf))/21))
	checkBase("plain without baselines", res[0], 0, false)

	// A reduced model equal to the baseline: VI 0 and se 0 exactly.
	eq := baselined{fixed: fixed{map[*framework.Problem]*mat.Dense{d.p: mat.NewDense(21, 1, d.base)}}, base: est.base, calls: new(int)}
	r1, err := framework.Reduce(context.Background(), ps, []framework.Estimator{eq}, feats[1:], framework.ReduceOptions{Workers: 1, EstimatorBaselines: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err = r1.Infer(m, framework.InferOptions{Inference: framework.Plain})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].VI != 0 || res[0].SE != 0 {
		t.Errorf("reduced = baseline: vi %v se %v, want 0 0", res[0].VI, res[0].SE)
	}

	// Three folds, split: the baselines of the folds that score the full
	// model (1 and 3) only; VI = mean over them of the baseline's score
	// minus fold 2's reduced score.
	ds := []data{mk(8), mk(9), mk(7)}
	est, ps = build(ds)
	r, err = framework.Reduce(context.Background(), ps, []framework.Estimator{est}, feats[:1], framework.ReduceOptions{Workers: 1, EstimatorBaselines: true, SplitOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if *est.calls != 2 {
		t.Errorf("split, 3 folds: %d baselines computed, want 2", *est.calls)
	}
	res, err = r.Infer(m, framework.InferOptions{Inference: framework.Split})
	if err != nil {
		t.Fatal(err)
	}
	b0, b2 := sqErr(ds[0].p.YEval, ds[0].base), sqErr(ds[2].p.YEval, ds[2].base)
	r1l := sqErr(ds[1].p.YEval, ds[1].red)
	check("cross-fitted split", res[0], mse(r1l)-(mse(b0)+mse(b2))/2,
		math.Sqrt((vr(b0)+vr(b2))/2/float64(len(b0)+len(b2))+vr(r1l)/float64(len(r1l))))
	checkBase("cross-fitted split", res[0], -(mse(b0)+mse(b2))/2, true)
}
