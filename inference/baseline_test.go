package inference_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
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
	mk := func(n int) baselineData { return newBaselineData(rng, n) }
	mse := func(l []float64) float64 { return stat.Mean(l, nil) }
	vr := func(l []float64) float64 { return stat.Variance(l, nil) }
	sub := func(a, b []float64) []float64 {
		d := make([]float64, len(a))
		for i := range d {
			d[i] = a[i] - b[i]
		}
		return d
	}

	// One fold of 21 rows.
	d := mk(21)
	est, ps := buildBaselined([]baselineData{d})
	r, err := pipeline.Reduce(context.Background(), ps, []framework.Estimator{est}, feats[:1], pipeline.ReduceOptions{Workers: 2, EstimatorBaselines: true})
	if err != nil {
		t.Fatal(err)
	}
	if *est.calls != 1 {
		t.Errorf("one fold: %d baselines computed, want 1", *est.calls)
	}
	lb, lr, lf := sqErr(d.p.YEval, d.base), sqErr(d.p.YEval, d.red), sqErr(d.p.YEval, mat.Col(nil, 0, d.p.FullEval))
	res, err := r.Infer(m, inference.InferOptions{Inference: inference.Plain})
	if err != nil {
		t.Fatal(err)
	}
	checkVISE(t, "plain", res[0], mse(lr)-mse(lb), math.Sqrt(vr(sub(lr, lb))/21))
	checkBaselineScore(t, "plain", res[0], -mse(lb), true)
	res, err = r.Infer(m, inference.InferOptions{Inference: inference.Split})
	if err != nil {
		t.Fatal(err)
	}
	checkVISE(t, "split", res[0], mse(lr[11:])-mse(lb[:11]), math.Sqrt(vr(lb[:11])/11+vr(lr[11:])/10))
	checkBaselineScore(t, "split", res[0], -mse(lb[:11]), true)

	// Without the option: scored against the full model.
	r0, err := pipeline.Reduce(context.Background(), ps, []framework.Estimator{est}, feats[:1], pipeline.ReduceOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	res, err = r0.Infer(m, inference.InferOptions{Inference: inference.Plain})
	if err != nil {
		t.Fatal(err)
	}
	checkVISE(t, "plain without baselines", res[0], mse(lr)-mse(lf), math.Sqrt(vr(sub(lr, lf))/21))
	checkBaselineScore(t, "plain without baselines", res[0], 0, false)

	// A reduced model equal to the baseline: VI 0 and se 0 exactly.
	eq := baselined{fixed: fixed{map[*framework.Problem]*mat.Dense{d.p: mat.NewDense(21, 1, d.base)}}, base: est.base, calls: new(int)}
	r1, err := pipeline.Reduce(context.Background(), ps, []framework.Estimator{eq}, feats[1:], pipeline.ReduceOptions{Workers: 1, EstimatorBaselines: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err = r1.Infer(m, inference.InferOptions{Inference: inference.Plain})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].VI != 0 || res[0].SE != 0 {
		t.Errorf("reduced = baseline: vi %v se %v, want 0 0", res[0].VI, res[0].SE)
	}

	// Three folds, split: the baselines of the folds that score the full
	// model (1 and 3) only; VI = mean over them of the baseline's score
	// minus fold 2's reduced score.
	ds := []baselineData{mk(8), mk(9), mk(7)}
	est, ps = buildBaselined(ds)
	r, err = pipeline.Reduce(context.Background(), ps, []framework.Estimator{est}, feats[:1], pipeline.ReduceOptions{Workers: 1, EstimatorBaselines: true, SplitOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if *est.calls != 2 {
		t.Errorf("split, 3 folds: %d baselines computed, want 2", *est.calls)
	}
	res, err = r.Infer(m, inference.InferOptions{Inference: inference.Split})
	if err != nil {
		t.Fatal(err)
	}
	b0, b2 := sqErr(ds[0].p.YEval, ds[0].base), sqErr(ds[2].p.YEval, ds[2].base)
	r1l := sqErr(ds[1].p.YEval, ds[1].red)
	checkVISE(t, "cross-fitted split", res[0], mse(r1l)-(mse(b0)+mse(b2))/2,
		math.Sqrt((vr(b0)+vr(b2))/2/float64(len(b0)+len(b2))+vr(r1l)/float64(len(r1l))))
	checkBaselineScore(t, "cross-fitted split", res[0], -(mse(b0)+mse(b2))/2, true)
}

// baselineData is a fold with a reduced model's and a baseline's
// predictions on its evaluation rows.
type baselineData struct {
	p         *framework.Problem
	red, base []float64
}

// newBaselineData draws a fold of n rows whose baseline improves on its
// full model.
func newBaselineData(rng *rand.Rand, n int) baselineData {
	y := randVec(rng, n, 1)
	full, red, base := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range y {
		full[i] = 0.6*y[i] + 0.3*rng.NormFloat64()
		base[i] = 0.8*y[i] + 0.1*rng.NormFloat64() // the procedure improves the full model
		red[i] = 0.5*y[i] + 0.3*rng.NormFloat64()
	}
	return baselineData{fold(y, full), red, base}
}

// buildBaselined is the estimator that gives the folds' reduced and
// baseline predictions, and the folds.
func buildBaselined(ds []baselineData) (baselined, []*framework.Problem) {
	est := baselined{fixed: fixed{map[*framework.Problem]*mat.Dense{}}, base: map[*framework.Problem]*mat.Dense{}, calls: new(int)}
	var ps []*framework.Problem
	for _, d := range ds {
		est.pred[d.p] = mat.NewDense(len(d.red), 1, d.red)
		est.base[d.p] = mat.NewDense(len(d.base), 1, d.base)
		ps = append(ps, d.p)
	}
	return est, ps
}

// checkVISE checks a result's VI and SE to 1e-12.
func checkVISE(t *testing.T, name string, got inference.Result, vi, se float64) {
	t.Helper()
	if !scalar.EqualWithinAbsOrRel(got.VI, vi, 1e-12, 1e-12) || !scalar.EqualWithinAbsOrRel(got.SE, se, 1e-12, 1e-12) {
		t.Errorf("%s: vi %v se %v, want %v %v", name, got.VI, got.SE, vi, se)
	}
}

// checkBaselineScore: the result reports the baseline's score (mse's
// value is -MSE), or none.
func checkBaselineScore(t *testing.T, name string, got inference.Result, want float64, has bool) {
	t.Helper()
	v, ok := got.Get("baseline_score")
	if ok != has || (has && !scalar.EqualWithinAbsOrRel(v.(float64), want, 1e-12, 1e-12)) {
		t.Errorf("%s: baseline_score %v (present %v), want %v (present %v)", name, v, ok, want, has)
	}
}

// fromBaseline is a BaselineReducer whose reductions say what they started
// from: ReduceFrom's Stats["from"] is the baseline's Stats["b"] (and its
// predictions the baseline's plus the feature's first column), Reduce's is
// -1. Its baseline takes a moment, so that other workers reach the fold's
// features while it runs.
type fromBaseline struct {
	b        float64
	baseline *atomic.Int32
}

func (fromBaseline) Name() string { return "from" }

func (e fromBaseline) Baseline(_ context.Context, p *framework.Problem) (framework.Reduced, error) {
	e.baseline.Add(1)
	time.Sleep(10 * time.Millisecond)
	return framework.Reduced{Pred: mat.DenseCopyOf(p.FullEval), Stats: map[string]float64{"b": e.b}}, nil
}

func (e fromBaseline) Reduce(_ context.Context, p *framework.Problem, f framework.Feature) (framework.Reduced, error) {
	return framework.Reduced{Pred: mat.DenseCopyOf(p.FullEval), Stats: map[string]float64{"from": -1}}, nil
}

func (e fromBaseline) ReduceFrom(_ context.Context, _ *framework.Problem, f framework.Feature, from func() (framework.Reduced, error)) (framework.Reduced, error) {
	base, err := from()
	if err != nil {
		return framework.Reduced{}, err
	}
	var pred mat.Dense
	pred.Apply(func(_, _ int, v float64) float64 { return v + float64(f.Columns[0]) }, base.Pred)
	return framework.Reduced{Pred: &pred, Stats: map[string]float64{"from": base.Stats["b"]}}, nil
}

// memCheckpoint is a Checkpoint in memory.
type memCheckpoint struct {
	mu sync.Mutex
	m  map[string]framework.Reduced
}

func (c *memCheckpoint) Load(key string) (framework.Reduced, float64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.m[key]
	return r, 0, ok
}

func (c *memCheckpoint) Save(key string, r framework.Reduced, _ float64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[key] = r
	return nil
}

// TestReduceFromBaseline: a BaselineReducer's features start from their
// fold's baseline, computed before them, whatever the workers (each
// feature sees the baseline's Stats and predictions); a baseline from a
// checkpoint is the one handed on; without baselines (no
// EstimatorBaselines, or a cross-fitting fold that split inference gives
// none) the features are reduced by Reduce.
func TestReduceFromBaseline(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	var feats []framework.Feature
	for j := 0; j < 6; j++ {
		feats = append(feats, framework.Feature{Name: "x", Columns: []int{j}})
	}
	y := randVec(rng, 20, 1)
	p := fold(y, randVec(rng, 20, 1))
	for _, workers := range []int{1, 2, 4, 8} {
		est := fromBaseline{b: 7, baseline: new(atomic.Int32)}
		r, err := pipeline.Reduce(ctx, []*framework.Problem{p}, []framework.Estimator{est}, feats, pipeline.ReduceOptions{Workers: workers, EstimatorBaselines: true})
		if err != nil {
			t.Fatal(err)
		}
		if n := est.baseline.Load(); n != 1 {
			t.Errorf("workers %d: %d baselines, want 1", workers, n)
		}
		for j, red := range r.Reduced[0][0] {
			if red.Stats["from"] != 7 || red.Pred.At(3, 0) != p.FullEval.At(3, 0)+float64(j) {
				t.Errorf("workers %d, feature %d: from %v, prediction %v; want the baseline's (7, %v)", workers, j, red.Stats["from"], red.Pred.At(3, 0), p.FullEval.At(3, 0)+float64(j))
			}
		}
	}

	// Resumed: the checkpoint's baseline (b 3) is what the features get,
	// not a new one.
	c := &memCheckpoint{m: map[string]framework.Reduced{
		"fold 1/1, estimator from, the baseline": {Pred: mat.DenseCopyOf(p.FullEval), Stats: map[string]float64{"b": 3}},
	}}
	est := fromBaseline{b: 7, baseline: new(atomic.Int32)}
	r, err := pipeline.Reduce(ctx, []*framework.Problem{p}, []framework.Estimator{est}, feats, pipeline.ReduceOptions{Workers: 2, EstimatorBaselines: true, Checkpoint: c})
	if err != nil {
		t.Fatal(err)
	}
	if n := est.baseline.Load(); n != 0 {
		t.Errorf("resumed: %d baselines computed, want 0", n)
	}
	for j, red := range r.Reduced[0][0] {
		if red.Stats["from"] != 3 {
			t.Errorf("resumed, feature %d: from %v, want the checkpoint's baseline's 3", j, red.Stats["from"])
		}
	}

	// No baselines: Reduce.
	r, err = pipeline.Reduce(ctx, []*framework.Problem{p}, []framework.Estimator{est}, feats, pipeline.ReduceOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	for j, red := range r.Reduced[0][0] {
		if red.Stats["from"] != -1 {
			t.Errorf("no baselines, feature %d: from %v, want Reduce's -1", j, red.Stats["from"])
		}
	}

	// Cross-fitted, split inference: fold 1 scores the full model (its
	// baseline), fold 2 the reduced ones, which have no baseline there.
	q := fold(y, randVec(rng, 20, 1))
	r, err = pipeline.Reduce(ctx, []*framework.Problem{p, q}, []framework.Estimator{est}, feats, pipeline.ReduceOptions{Workers: 2, EstimatorBaselines: true, SplitOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	for j, red := range r.Reduced[1][0] {
		if red.Stats["from"] != -1 {
			t.Errorf("split, fold 2, feature %d: from %v, want Reduce's -1", j, red.Stats["from"])
		}
	}
	if r.Base[0][0].Pred == nil || r.Base[1][0].Pred != nil {
		t.Errorf("split: baselines on folds 1, 2: %v, %v; want fold 1's only", r.Base[0][0].Pred != nil, r.Base[1][0].Pred != nil)
	}
}

// lateBaseline is a BaselineReducer whose ReduceFrom never asks for the
// baseline, and whose baseline is done only after all its features are.
type lateBaseline struct {
	features int
	done     chan struct{}
	n        *atomic.Int32
}

func (lateBaseline) Name() string { return "late" }

func (e lateBaseline) Baseline(ctx context.Context, p *framework.Problem) (framework.Reduced, error) {
	select {
	case <-e.done:
	case <-ctx.Done():
		return framework.Reduced{}, ctx.Err()
	}
	return framework.Reduced{Pred: mat.DenseCopyOf(p.FullEval)}, nil
}

func (e lateBaseline) Reduce(ctx context.Context, p *framework.Problem, f framework.Feature) (framework.Reduced, error) {
	return framework.Reduced{}, fmt.Errorf("Reduce called")
}

func (e lateBaseline) ReduceFrom(_ context.Context, p *framework.Problem, _ framework.Feature, _ func() (framework.Reduced, error)) (framework.Reduced, error) {
	if int(e.n.Add(1)) == e.features {
		close(e.done)
	}
	return framework.Reduced{Pred: mat.DenseCopyOf(p.FullEval)}, nil
}

// A reduction that does not ask for its baseline does not wait for it:
// with two workers, the features run while the baseline waits for them
// (were they made to wait for the baseline, the run would deadlock, ended
// here by the context's deadline).
func TestReduceFromDoesNotWait(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rng := rand.New(rand.NewPCG(7, 8))
	feats := []framework.Feature{{Name: "a", Columns: []int{0}}, {Name: "b", Columns: []int{0}}, {Name: "c", Columns: []int{0}}}
	p := fold(randVec(rng, 10, 1), randVec(rng, 10, 1))
	est := lateBaseline{features: len(feats), done: make(chan struct{}), n: new(atomic.Int32)}
	if _, err := pipeline.Reduce(ctx, []*framework.Problem{p}, []framework.Estimator{est}, feats, pipeline.ReduceOptions{Workers: 2, EstimatorBaselines: true}); err != nil {
		t.Fatal(err)
	}
}
