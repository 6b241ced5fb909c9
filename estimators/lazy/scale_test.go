package lazy

import (
	"context"
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
)

// rfMultiplierModel is rfModel with framework.JacobianMultiplier from its
// features.
type rfMultiplierModel struct{ *rfModel }

func (r rfMultiplierModel) JacobianMul(_ context.Context, x mat.Matrix, v *mat.Dense) (*mat.Dense, error) {
	var out mat.Dense
	out.Mul(r.phi(x), v)
	return &out, nil
}

func (r rfMultiplierModel) JacobianTMul(_ context.Context, x mat.Matrix, u *mat.Dense) (*mat.Dense, error) {
	var out mat.Dense
	out.Mul(r.phi(x).T(), u)
	return &out, nil
}

// tinyMemory makes every ridge problem of these tests "too large": lazy
// takes its scaled path (subsample cross-validation, matrix-free solve).
const tinyMemory = 1 << 10

// energy is (x - y)^T A (x - y).
func energy(a *mat.Dense, x, y []float64) float64 {
	d := make([]float64, len(x))
	for i := range d {
		d[i] = x[i] - y[i]
	}
	dv := mat.NewVecDense(len(d), d)
	var ad mat.VecDense
	ad.MulVec(a, dv)
	return mat.Dot(dv, &ad)
}

// The matrix-free solve stops when its estimate of the energy error
// ||w - w*||^2_A = J(w) - J(w*) is at most energyTol of the decrease of J
// achieved: the true energy error must meet that (the estimate is a lower
// bound, sharp when the convergence is fast, as it is here), a tighter
// tolerance must not give a worse solution, and the Reduce predictions
// then differ from the closed form's by at most what that error allows:
// |phi_i^T (w - w*)| <= ||phi_i|| ||w - w*|| <= ||phi_i|| sqrt(energyTol
// (J(0) - J(w*)) / alpha). Primal (M < n1) and dual-sized problems, by
// the model's products or its Jacobian.
func TestLazyMatrixFreeMatchesClosedForm(t *testing.T) {
	ctx := context.Background()
	for i, tc := range []struct {
		name       string
		m          int
		multiplier bool
	}{
		{"M < n1, from Jacobian", 20, false},
		{"M > n1, from Jacobian", 150, false},
		{"M < n1, by products", 20, true},
		{"M > n1, by products", 150, true},
	} {
		r := newRF(4, tc.m, uint64(i+1))
		var model framework.Model = r
		if tc.multiplier {
			model = rfMultiplierModel{r}
		}
		p := problemFor(t, model, 100, 40, 4, uint64(i+10))
		f := framework.Feature{Name: "x1", Columns: []int{0}}
		g := model.(framework.Gradienter)
		x, e := droppedResiduals(r, p, f)
		for _, alpha := range []float64{3, 100} {
			wStar, decrease, a, norms := ridgeOptimum(r, p, f, alpha)
			prevErr, prevSteps := math.Inf(1), 0
			for _, tau := range []float64{1e-1, energyTol, 1e-4} {
				w, steps, _, _, err := doubleProblem(g, x, e).solveMatrixFree(ctx, alpha, tau, nil)
				if err != nil {
					t.Fatalf("%s alpha %g tau %g: %v", tc.name, alpha, tau, err)
				}
				got := energy(a, w, wStar)
				if got > tau*decrease {
					t.Errorf("%s alpha %g tau %g: energy error %.3g above tau x decrease %.3g (%d steps)", tc.name, alpha, tau, got, tau*decrease, steps)
				}
				if got > prevErr || steps < prevSteps {
					t.Errorf("%s alpha %g tau %g: %d steps, error %.3g; the looser tolerance took %d steps, error %.3g", tc.name, alpha, tau, steps, got, prevSteps, prevErr)
				}
				prevErr, prevSteps = got, steps
			}
			// From a start: the same guarantee, measured from 0, whatever
			// the start (near the solution, or a poor one: the solution
			// reversed); near it, fewer steps than from 0.
			cold, coldSteps, _, _, err := doubleProblem(g, x, e).solveMatrixFree(ctx, alpha, energyTol, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, scale := range []float64{0.9, -1} {
				w0 := make([]float64, len(wStar))
				floats.ScaleTo(w0, scale, wStar)
				w, steps, _, _, err := doubleProblem(g, x, e).solveMatrixFree(ctx, alpha, energyTol, w0)
				if err != nil {
					t.Fatalf("%s alpha %g from %g w*: %v", tc.name, alpha, scale, err)
				}
				if got := energy(a, w, wStar); got > energyTol*decrease {
					t.Errorf("%s alpha %g from %g w*: energy error %.3g above tau x decrease %.3g (%d steps)", tc.name, alpha, scale, got, energyTol*decrease, steps)
				}
				if scale == 0.9 && energy(a, cold, wStar) > 0 && steps >= coldSteps {
					t.Errorf("%s alpha %g from 0.9 w*: %d steps, from 0 %d", tc.name, alpha, steps, coldSteps)
				}
			}
			red, err := Estimator{Folds: 4, Lambda: alpha, Memory: tinyMemory}.Reduce(ctx, p, f)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if red.Stats[statMethod] != 1 || red.Stats[statSteps] < 1 {
				t.Fatalf("%s: not solved matrix-free: stats %v", tc.name, red.Stats)
			}
			want := wantLazy(r, p, f, alpha)
			for k, wv := range want {
				bound := norms[k] * math.Sqrt(energyTol*decrease/alpha)
				if gv := red.Pred.At(k, 0); math.Abs(gv-wv) > bound {
					t.Fatalf("%s alpha %g: row %d: want %v, got %v (bound %g)", tc.name, alpha, k, wv, gv, bound)
				}
			}
		}
	}
}

// With no more train rows than the subsample, the scaled path's
// cross-validation sees the same rows in the same folds as the dense one:
// the same penalty (to rounding), and the same predictions to the matrix-free
// solve's accuracy (the bound of TestLazyMatrixFreeMatchesClosedForm).
func TestLazyScaledCVMatchesDense(t *testing.T) {
	r := newRF(4, 150, 3)
	p := problemFor(t, rfMultiplierModel{r}, 120, 40, 4, 21)
	f := framework.Feature{Name: "x1", Columns: []int{0}}
	dense, err := Estimator{Folds: 3}.Reduce(context.Background(), p, f)
	if err != nil {
		t.Fatal(err)
	}
	scaled, err := Estimator{Folds: 3, Memory: tinyMemory}.Reduce(context.Background(), p, f)
	if err != nil {
		t.Fatal(err)
	}
	// The same search on the same rows: the same penalty, to the rounding
	// of the kernels' sums (OpenBLAS's order can depend on the copies'
	// alignment), far below the 0.15-decade steps a different row or fold
	// would move it by.
	alpha := dense.Stats[statLambda]
	if math.Abs(scaled.Stats[statLambda]-alpha) > 1e-9*alpha || scaled.Stats[statSubsample] != 120 {
		t.Fatalf("penalty: dense %v, scaled %v (stats %v)", alpha, scaled.Stats[statLambda], scaled.Stats)
	}
	if math.IsInf(alpha, 1) {
		t.Fatalf("no update chosen: the check would prove nothing")
	}
	_, decrease, _, norms := ridgeOptimum(r, p, f, alpha)
	for i := 0; i < 40; i++ {
		bound := norms[i] * math.Sqrt(energyTol*decrease/alpha)
		if d, s := dense.Pred.At(i, 0), scaled.Pred.At(i, 0); math.Abs(d-s) > bound {
			t.Fatalf("row %d: dense %v, scaled %v, bound %g", i, d, s, bound)
		}
	}
}

// The cost model: dense where it fits and is cheaper, matrix-free where
// the kernel does not fit or costs more.
func TestChooseMethod(t *testing.T) {
	for _, tc := range []struct {
		n, k, m    int
		kernel, mf bool
		mem        float64
		want       solveMethod
	}{
		{20, 1, 5000, true, true, DefaultMemory, methodDense},          // n^2 M below 10 Krylov steps' 4 n M
		{13333, 1, 21601, true, true, DefaultMemory, methodMatrixFree}, // the kernel is 1.4 GB
		{6667, 1, 40401, true, true, DefaultMemory, methodMatrixFree},  // fits, but n^2 M flops
		{20000, 1, 20, false, true, DefaultMemory, methodDense},        // primal, M small: n M^2 below 10 steps' 4 n M
		{6667, 1, 40401, true, false, DefaultMemory, methodDense},      // the products would need the 2 GB Jacobian
		{6667, 1, 40401, true, true, 1 << 20, methodMatrixFree},        // the kernel is above a 1 MiB bound
		{40, 1, 5000, true, true, DefaultMemory, methodDense},          // 8.2e6 flops against 10 steps' 1e7
		{40, 10, 5000, true, true, DefaultMemory, methodMatrixFree},    // 4 samples of 10 outputs: 10 steps 2.8e6
		{40, 10, 5000, true, false, DefaultMemory, methodDense},        // the formed Jacobian's products: 1e7
	} {
		if got := chooseMethod(tc.n, tc.k, tc.m, tc.kernel, tc.mf, tc.mem); got != tc.want {
			t.Errorf("n %d, k %d, m %d, multiplier %v: method %d, want %d", tc.n, tc.k, tc.m, tc.mf, got, tc.want)
		}
	}
}

// The scaled path takes problems whose dense cross-validation does not fit
// and, for a cross-validated penalty, those whose ridge system's side is at
// least midScale times the subsample's; a fixed penalty keeps the dense
// path below the bounds, as do the paper's sizes (highdim n 1000: 667 train
// rows; linear n 5000: 401 parameters).
func TestLazyScaledSizes(t *testing.T) {
	for _, tc := range []struct {
		n1, k, m int
		lz       Estimator
		want     bool
	}{
		{667, 1, 5101, Estimator{}, false},                         // highdim, the paper's size
		{3333, 1, 401, Estimator{}, false},                         // linear n 5000, width 50: primal side 401
		{1999, 1, 5101, Estimator{}, false},                        // side 1999: below twice the 1000-row subsample
		{2000, 1, 5101, Estimator{}, true},                         // side 2000: the subsample is half the rows
		{2000, 1, 5101, Estimator{Lambda: 10}, false},              // a fixed penalty needs no search
		{5000, 1, 1999, Estimator{}, false},                        // primal side 1999
		{5000, 1, 2000, Estimator{}, true},                         // primal side 2000
		{3001, 1, 40401, Estimator{Lambda: 10}, true},              // above maxRidgeDim whatever the penalty
		{1500, 1, 5101, Estimator{Memory: 1 << 20}, true},          // its 18 MB kernel above a 1 MiB bound
		{900, 3, 5101, Estimator{}, false},                         // 3 outputs: a 900-row subsample, side 2700
		{1000, 10, 40401, Estimator{}, true},                       // 10 outputs: side 10000
		{1999, 1, 5101, Estimator{Memory: 8 * 1999 * 1999}, false}, // its kernel just fits
	} {
		if got := tc.lz.scaled(tc.n1, tc.k, tc.m); got != tc.want {
			t.Errorf("n1 %d, k %d, m %d, %+v: scaled %v, want %v", tc.n1, tc.k, tc.m, tc.lz, got, tc.want)
		}
	}
}

// A product is counted as a pass per sample through a JacobianMultiplier
// (2 samples M flops whatever the outputs) and as the formed Jacobian's
// matrix product otherwise (2 rows M): 5 samples of 3 outputs, 7
// parameters.
func TestProductFlops(t *testing.T) {
	x := mat.NewDense(5, 2, nil)
	j := mat.NewDense(15, 7, nil)
	for _, tc := range []struct {
		jm   framework.JacobianMultiplier
		want float64
	}{
		{wrappedMultiplier{jacobianOnly{j}}, 2 * 5 * 7},
		{jacobianOnly{j}, 2 * 15 * 7},
	} {
		op := &jacobianOp{ctx: context.Background(), jm: tc.jm, x: x, n: 15, m: 7}
		if _, err := op.mul(make([]float64, 7), false); err != nil {
			t.Fatal(err)
		}
		if _, err := op.mul(make([]float64, 15), true); err != nil {
			t.Fatal(err)
		}
		if op.flops != 2*tc.want {
			t.Errorf("%T: two products counted %g flops, want %g", tc.jm, op.flops, 2*tc.want)
		}
	}
}

// Degenerate shapes count as one output a row, never divide by zero.
func TestProductFlopsDegenerate(t *testing.T) {
	for _, tc := range []struct{ n, k, m int }{{15, 0, 7}, {0, 3, 7}, {0, 0, 7}} {
		if got, want := productFlops(tc.n, tc.k, tc.m, true), 2*float64(tc.n/max(tc.k, 1))*float64(tc.m); got != want {
			t.Errorf("productFlops(%d, %d, %d): %g, want %g", tc.n, tc.k, tc.m, got, want)
		}
	}
	op := &jacobianOp{ctx: context.Background(), jm: wrappedMultiplier{jacobianOnly{mat.NewDense(3, 2, nil)}}, x: &mat.Dense{}, n: 3, m: 2}
	if _, err := op.mul(make([]float64, 2), false); err != nil || op.flops != 2*3*2 {
		t.Errorf("no sample rows: flops %g (error %v), want %d", op.flops, err, 2*3*2)
	}
}

// wrappedMultiplier is a JacobianMultiplier that is not jacobianOnly.
type wrappedMultiplier struct{ jacobianOnly }

// The scaled path on an MLP gives the same numbers whatever the worker
// count: features reduced concurrently share the model (and its memo of
// signals) and read their baseline's penalty and, where the solves are
// preconditioned by the baseline's Ritz pairs, its Carry, never each
// other's results. The framework hands each feature its fold's baseline
// (framework.BaselineReducer): the features' reductions are ReduceFrom's
// with that baseline, the same with 1 and 3 workers; without baselines
// they are Reduce's. A baseline of no update (+Inf) starts the features'
// searches at the top of the grid (nearStart), not at Reduce's walk of
// the grid. Both preconditioners are covered: the network's step (200
// rows of 1633 parameters) is below the 200-row subsample's sketch
// (sketch.pays), so that the Ritz pairs precondition; a 40-row subsample's
// sketch is below a quarter of it, so that each solve is preconditioned by
// its own subsample's sketch and the baseline carries nothing.
func TestLazyScaledWorkersDeterministic(t *testing.T) {
	ctx := context.Background()
	sim, err := simulate.Generate("highdim", 300, 0.5, 3)
	if err != nil {
		t.Fatal(err)
	}
	d := &dataio.Dataset{Source: "highdim", Names: sim.Names, X: sim.X}
	p, err := pipeline.Prepare(ctx, d, pipeline.Config{Backend: mlp.Backend{}, BackendName: "mlp", Seed: 5, Options: map[string]string{"hidden": "16", "epochs": "30"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, tc := range []struct {
		name   string
		lz     Estimator
		sketch bool
	}{
		{"the baseline's Ritz pairs", Estimator{Memory: tinyMemory}, false},
		{"the subsample's sketch", Estimator{Memory: tinyMemory, cfg: config{subsampleRows: 40}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) { checkScaledWorkers(t, p, tc.lz, tc.sketch) })
	}
}

// checkScaledWorkers is TestLazyScaledWorkersDeterministic's check of lz
// on p's first six features, its solves preconditioned by the subsample's
// sketch (sketch) or by the baseline's Ritz pairs.
func checkScaledWorkers(t *testing.T, p *framework.Problem, lz Estimator, sketch bool) {
	ctx := context.Background()
	feats := p.Features()[:6]
	base, err := lz.Baseline(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if l := base.Stats[statLambda]; !(l > 0) || math.IsInf(l, 1) {
		t.Fatalf("the baseline's penalty is %v: ReduceFrom would search from scratch, the check would prove less", l)
	}
	if carries := len(base.Carry) > 0; carries == sketch {
		t.Errorf("the baseline carries Ritz pairs: %v, want %v (sketch.pays)", carries, !sketch)
	}
	same := func(what string, a, b framework.Reduced) {
		t.Helper()
		if !mat.Equal(a.Pred, b.Pred) || a.Stats[statLambda] != b.Stats[statLambda] {
			t.Errorf("%s: predictions or penalty differ (penalty %v, %v)", what, a.Stats[statLambda], b.Stats[statLambda])
		}
	}
	var runs [2]*inference.Reductions
	for i, w := range []int{1, 3} {
		if runs[i], err = pipeline.Reduce(ctx, []*framework.Problem{p}, []framework.Estimator{lz}, feats, pipeline.ReduceOptions{Workers: w, EstimatorBaselines: true}); err != nil {
			t.Fatal(err)
		}
		same(fmt.Sprintf("%d workers, the baseline", w), runs[i].Base[0][0], base)
	}
	plain, err := pipeline.Reduce(ctx, []*framework.Problem{p}, []framework.Estimator{lz}, feats, pipeline.ReduceOptions{Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	steps, differ, precond := 0.0, 0, 0.0
	own := make([]framework.Reduced, len(feats))
	for j, f := range feats {
		steps += runs[0].Reduced[0][0][j].Stats[statSteps]
		precond += runs[0].Reduced[0][0][j].Stats[statPrecond]
		same(f.Name+", 1 and 3 workers", runs[0].Reduced[0][0][j], runs[1].Reduced[0][0][j])
		from, err := lz.ReduceFrom(ctx, p, f, func() (framework.Reduced, error) { return base, nil })
		if err != nil {
			t.Fatal(err)
		}
		same(f.Name+", ReduceFrom", runs[0].Reduced[0][0][j], from)
		if own[j], err = lz.Reduce(ctx, p, f); err != nil {
			t.Fatal(err)
		}
		same(f.Name+", Reduce without baselines", plain.Reduced[0][0][j], own[j])
		if own[j].Stats[statLambda] != from.Stats[statLambda] {
			differ++
		}
	}
	if differ == 0 {
		t.Errorf("ReduceFrom chose every feature's penalty as Reduce did: the check cannot tell them apart")
	}
	checkFromNoUpdate(t, p, lz, feats, base, own)
	if steps == 0 {
		t.Fatalf("no matrix-free solve ran: the check would prove nothing")
	}
	if precond == 0 {
		t.Errorf("no feature's solve was preconditioned: the workers' check does not cover it")
	}
	// The report shows it: Summarize sums the preconditioned steps of the
	// feature's reductions into "preconditioned".
	var stats []map[string]float64
	for j := range feats {
		stats = append(stats, runs[0].Reduced[0][0][j].Stats)
	}
	got, seen := 0.0, false
	for _, fl := range lz.Summarize(stats) {
		if fl.Key == statPrecond {
			got, seen = fl.Value.(float64), true
		}
	}
	if !seen || got != precond {
		t.Errorf("Summarize: preconditioned %v (present %v), want the reductions' %v", got, seen, precond)
	}
}

// checkFromNoUpdate checks that ReduceFrom from a baseline of no update
// (+Inf) chooses some feature's penalty otherwise than Reduce did (own):
// +Inf is passed on to nearStart.
func checkFromNoUpdate(t *testing.T, p *framework.Problem, lz Estimator, feats []framework.Feature, base framework.Reduced, own []framework.Reduced) {
	t.Helper()
	none := framework.Reduced{Pred: base.Pred, Stats: map[string]float64{statLambda: math.Inf(1)}}
	differ := 0
	for j, f := range feats {
		top, err := lz.ReduceFrom(context.Background(), p, f, func() (framework.Reduced, error) { return none, nil })
		if err != nil {
			t.Fatal(err)
		}
		if top.Stats[statLambda] != own[j].Stats[statLambda] {
			differ++
		}
	}
	if differ == 0 {
		t.Errorf("ReduceFrom from a baseline of no update chose every feature's penalty as Reduce did: +Inf not passed on to nearStart")
	}
}

// On the dense path too, a feature's search starts from its fold's
// baseline's penalty (ReduceFrom; the same rows and folds as the
// feature's), and the numbers are the same whatever the worker count: the
// features reduced by the framework are ReduceFrom's with that baseline,
// and some penalty differs from Reduce's own search (else the check could
// not tell them apart).
func TestLazyDenseFromBaseline(t *testing.T) {
	ctx := context.Background()
	sim, err := simulate.Generate("linear", 240, 0.5, 3)
	if err != nil {
		t.Fatal(err)
	}
	d := &dataio.Dataset{Source: "linear", Names: sim.Names, X: sim.X}
	p, err := pipeline.Prepare(ctx, d, pipeline.Config{Backend: mlp.Backend{}, BackendName: "mlp", Seed: 5, Options: map[string]string{"hidden": "16", "epochs": "30"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	lz := Estimator{}
	if n1, _ := p.XTrain.Dims(); lz.scaled(n1, 1, p.Full.(framework.Gradienter).NumParams()) {
		t.Fatal("the problem takes the scaled path: the check would not cover the dense one")
	}
	base, err := lz.Baseline(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if l := base.Stats[statLambda]; !(l > 0) || math.IsInf(l, 1) {
		t.Fatalf("the baseline's penalty is %v: ReduceFrom would search from the top, the check would prove less", l)
	}
	feats := p.Features()
	var runs [2]*inference.Reductions
	for i, w := range []int{1, 3} {
		if runs[i], err = pipeline.Reduce(ctx, []*framework.Problem{p}, []framework.Estimator{lz}, feats, pipeline.ReduceOptions{Workers: w, EstimatorBaselines: true}); err != nil {
			t.Fatal(err)
		}
	}
	differ := 0
	for j, f := range feats {
		from, err := lz.ReduceFrom(ctx, p, f, func() (framework.Reduced, error) { return base, nil })
		if err != nil {
			t.Fatal(err)
		}
		for w, run := range runs {
			if r := run.Reduced[0][0][j]; !mat.Equal(r.Pred, from.Pred) || r.Stats[statLambda] != from.Stats[statLambda] {
				t.Errorf("%s, run %d: the framework's reduction is not ReduceFrom's (penalty %v, %v)", f.Name, w, r.Stats[statLambda], from.Stats[statLambda])
			}
		}
		own, err := lz.Reduce(ctx, p, f)
		if err != nil {
			t.Fatal(err)
		}
		if own.Stats[statLambda] != from.Stats[statLambda] {
			differ++
		}
	}
	if differ == 0 {
		t.Errorf("ReduceFrom chose every feature's penalty as Reduce did: the baseline's penalty is not used on the dense path")
	}
}
