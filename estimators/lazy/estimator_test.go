package lazy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/framework/jacobian"
)

// rfModel is a random-features model h(x) = phi(x) . theta with
// phi(x) = (tanh(W x + b), 1): linear in its parameters, so it is its own
// linearisation and every lazy quantity has a closed form.
type rfModel struct {
	w     *mat.Dense // M-1 x p
	b     []float64
	theta []float64
}

type rfKernelModel struct{ *rfModel }

func newRF(p, m int, seed uint64) *rfModel {
	rng := rand.New(rand.NewPCG(seed, 7))
	w := mat.NewDense(m-1, p, nil)
	b := make([]float64, m-1)
	for i := 0; i < m-1; i++ {
		b[i] = rng.NormFloat64()
		for j := 0; j < p; j++ {
			w.Set(i, j, rng.NormFloat64())
		}
	}
	return &rfModel{w: w, b: b}
}

func (r *rfModel) phi(x mat.Matrix) *mat.Dense {
	n, _ := x.Dims()
	m1, _ := r.w.Dims()
	out := mat.NewDense(n, m1+1, nil)
	var z mat.Dense
	z.Mul(x, r.w.T())
	for i := 0; i < n; i++ {
		for k := 0; k < m1; k++ {
			out.Set(i, k, math.Tanh(z.At(i, k)+r.b[k]))
		}
		out.Set(i, m1, 1)
	}
	return out
}

func (r *rfModel) Fit(_ context.Context, x mat.Matrix, y []float64) error {
	ph := r.phi(x)
	_, m := ph.Dims()
	var g mat.SymDense
	g.SymOuterK(1, ph.T())
	b := mat.NewVecDense(m, nil)
	b.MulVec(ph.T(), mat.NewVecDense(len(y), y))
	t, err := choleskySolve(&g, 1e-6, b.RawVector().Data)
	r.theta = t
	return err
}

func (r *rfModel) Predict(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	return r.PredictShifted(ctx, x, make([]float64, len(r.theta)))
}

func (r *rfModel) NumParams() int { m, _ := r.w.Dims(); return m + 1 }

func (r *rfModel) Jacobian(_ context.Context, x mat.Matrix) (*mat.Dense, error) {
	return r.phi(x), nil
}

func (r *rfModel) PredictShifted(_ context.Context, x mat.Matrix, d []float64) (*mat.Dense, error) {
	t := make([]float64, len(r.theta))
	for i := range t {
		t[i] = r.theta[i] + d[i]
	}
	ph := r.phi(x)
	n, _ := ph.Dims()
	out := mat.NewDense(n, 1, nil)
	out.Mul(ph, mat.NewDense(len(t), 1, t))
	return out, nil
}

func (r rfKernelModel) Kernel(_ context.Context, x1, x2 mat.Matrix) (*mat.Dense, error) {
	if x2 == nil {
		x2 = x1
	}
	var k mat.Dense
	k.Mul(r.phi(x1), r.phi(x2).T())
	return &k, nil
}

func (r rfKernelModel) JacobianTVec(_ context.Context, x mat.Matrix, a []float64) ([]float64, error) {
	ph := r.phi(x)
	_, m := ph.Dims()
	out := mat.NewVecDense(m, nil)
	out.MulVec(ph.T(), mat.NewVecDense(len(a), a))
	return out.RawVector().Data, nil
}

// problemFor builds a Problem around an already fitted model.
// testProblem is the ridge problem of the rows x, one output each, with
// targets t and residuals e, for the settings est.
func testProblem(est Estimator, g framework.Gradienter, x *mat.Dense, t, e []float64, seed int64) *problem {
	return &problem{est: est, g: g, x: x, targets: t, e: e, k: 1, seed: seed, stats: map[string]float64{}}
}

// doubleProblem is testProblem's problem in double precision, without
// targets: for the matrix-free solves on the model's float64 products.
func doubleProblem(g framework.Gradienter, x *mat.Dense, e []float64) *problem {
	return testProblem(Estimator{DoublePrecision: true}, g, x, nil, e, 0)
}

func problemFor(t *testing.T, full framework.Model, n1, n2, p int, seed uint64) *framework.Problem {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 3))
	mk := func(n int) (*mat.Dense, []float64) {
		x := mat.NewDense(n, p, nil)
		y := make([]float64, n)
		for i := 0; i < n; i++ {
			for j := 0; j < p; j++ {
				x.Set(i, j, rng.NormFloat64())
			}
			// x1 = 0.9 x2 + noise: dropping x1 leaves E[y | x_-1] with a
			// 1.8 x2 term that the full model's x1 carried.
			x.Set(i, 0, 0.9*x.At(i, 1)+math.Sqrt(1-0.81)*x.At(i, 0))
			y[i] = 2*x.At(i, 0) + math.Sin(x.At(i, 1)) + 0.3*rng.NormFloat64()
		}
		return x, y
	}
	xtr, ytr := mk(n1)
	xev, yev := mk(n2)
	if err := full.Fit(context.Background(), xtr, ytr); err != nil {
		t.Fatal(err)
	}
	return &framework.Problem{Task: framework.Regression, BackendName: "rf", XTrain: xtr, XEval: xev, YTrain: ytr, YEval: yev, Full: full, Seed: 11}
}

// wantLazy is the closed form: pred = phi(xev^(j)) (theta + (Phi^T Phi + alpha I)^-1 Phi^T e).
func wantLazy(r *rfModel, p *framework.Problem, f framework.Feature, alpha float64) []float64 {
	w, _, _, _ := ridgeOptimum(r, p, f, alpha)
	pred, _ := r.PredictShifted(context.Background(), p.Drop(p.XEval, f), w)
	return mat.Col(nil, 0, pred)
}

// ridgeOptimum is the closed-form ridge solution for feature f at alpha on
// the random-features model: w*, the decrease J(0) - J(w*) = b^T w* of
// the objective J(w) = ||e - Phi w||^2 + alpha ||w||^2 (b = Phi^T e), the
// system A = Phi^T Phi + alpha I, and the norms of the evaluation rows'
// features.
func ridgeOptimum(r *rfModel, p *framework.Problem, f framework.Feature, alpha float64) (w []float64, decrease float64, a *mat.Dense, rowNorms []float64) {
	ph := r.phi(p.Drop(p.XTrain, f))
	n, m := ph.Dims()
	base := mat.NewVecDense(n, nil)
	base.MulVec(ph, mat.NewVecDense(m, r.theta))
	e := make([]float64, n)
	for i := range e {
		e[i] = p.YTrain[i] - base.AtVec(i)
	}
	a = mat.NewDense(m, m, nil)
	a.Mul(ph.T(), ph)
	for i := 0; i < m; i++ {
		a.Set(i, i, a.At(i, i)+alpha)
	}
	rhs := mat.NewVecDense(m, nil)
	rhs.MulVec(ph.T(), mat.NewVecDense(n, e))
	var d mat.VecDense
	if err := d.SolveVec(a, rhs); err != nil {
		panic(err)
	}
	pev := r.phi(p.Drop(p.XEval, f))
	ne, _ := pev.Dims()
	for i := 0; i < ne; i++ {
		rowNorms = append(rowNorms, mat.Norm(pev.RowView(i), 2))
	}
	return d.RawVector().Data, mat.Dot(rhs, &d), a, rowNorms
}

func TestLazyFixedAlphaMatchesClosedForm(t *testing.T) {
	for i, tc := range []struct {
		name   string
		m      int
		kernel bool
	}{
		{"primal (M < n1)", 20, false},
		{"dual from Jacobian (M > n1)", 150, false},
		{"dual from Kerneler (JacobianTVec)", 150, true},
	} {
		r := newRF(4, tc.m, uint64(i+1))
		var model framework.Model = r
		if tc.kernel {
			model = rfKernelModel{r}
		}
		p := problemFor(t, model, 100, 40, 4, uint64(i+10))
		f := framework.Feature{Name: "x1", Columns: []int{0}}
		for _, alpha := range []float64{0.1, 3, 100} {
			got, err := Estimator{Folds: 4, Lambda: alpha}.Reduce(context.Background(), p, f)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if got.Stats["lambda"] != alpha {
				t.Errorf("%s: lambda %v, want %v", tc.name, got.Stats["lambda"], alpha)
			}
			want := wantLazy(r, p, f, alpha)
			for k, w := range want {
				if g := got.Pred.At(k, 0); !scalar.EqualWithinAbsOrRel(g, w, 1e-8, 1e-8) {
					t.Fatalf("%s alpha %g: row %d: want %v, got %v", tc.name, alpha, k, w, g)
				}
			}
		}
	}
}

// The fold solver's predictions must be those of a ridge fit on the fold's
// training rows alone.
func TestRidgeFoldMatchesDirectFit(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		m      int
		kernel string
	}{{15, "none"}, {15, "GramBuilder"}, {120, "none"}, {120, "Kerneler"}, {120, "ShiftBatcher"}} {
		m := tc.m
		r := newRF(3, m, 5)
		var model framework.Gradienter = r
		ds := &rfBatchModel{rfKernelModel: rfKernelModel{r}}
		gr := &rfGramModel{rfModel: r}
		switch tc.kernel {
		case "Kerneler":
			model = rfKernelModel{r}
		case "ShiftBatcher":
			model = ds
		case "GramBuilder":
			model = gr
		}
		p := problemFor(t, model, 90, 10, 3, 6)
		x := p.XTrain
		e := make([]float64, 90)
		for i := range e {
			e[i] = p.YTrain[i]
		}
		rp, err := testProblem(Estimator{}, model, x, nil, e, 0).newRidge(ctx, []int{0, 40, 62, 90}, false)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := 40, 62 // rows in fold order: the held-out fold is a block
		solve, err := rp.fold(ctx, lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		train := append(allRows(lo), allRows(90)[hi:]...)
		ph := r.phi(rowsOf(x, train))
		et := make([]float64, len(train))
		for k, row := range train {
			et[k] = e[row]
		}
		alphas := []float64{0.01, 1, 50}
		shifts, err := solve(ctx, alphas)
		if err != nil {
			t.Fatal(err)
		}
		var batch []framework.Shift
		for c, sh := range shifts {
			if sh == nil {
				t.Fatalf("alpha %g: unusable", alphas[c])
			}
			if wantDual := tc.kernel == "Kerneler" || tc.kernel == "ShiftBatcher"; (sh.XTrain != nil) != wantDual {
				t.Errorf("%s: shift in the dual form %v, want %v", tc.kernel, sh.XTrain != nil, wantDual)
			}
			batch = append(batch, *sh)
		}
		preds, err := jacobian.PredictShifts(ctx, model, batch)
		if err != nil {
			t.Fatal(err)
		}
		xH := x.Slice(lo, hi, 0, 3)
		for c, alpha := range alphas {
			if preds[c] == nil {
				t.Fatalf("alpha %g: unusable", alpha)
			}
			wantPred, tol, kappa := directRidgeFit(t, r, ph, et, xH, alpha)
			var diff mat.Dense
			diff.Sub(preds[c], wantPred)
			if d := mat.Norm(&diff, 2); d > tol {
				t.Fatalf("M=%d kernel %s alpha %g: |pred - want| = %.3g, want <= %.3g (kappa %.3g)", m, tc.kernel, alpha, d, tol, kappa)
			}
		}
		if tc.kernel == "ShiftBatcher" && ds.calls != 1 {
			t.Errorf("ShiftBatcher: %d batches, want 1", ds.calls)
		}
		if tc.kernel == "GramBuilder" && (gr.grams != 3 || gr.jacobians != 0) {
			t.Errorf("GramBuilder: %d Grams and %d Jacobians, want one Gram per fold block and no Jacobian", gr.grams, gr.jacobians)
		}
	}
}

// directRidgeFit is the ridge fit with penalty alpha of et on the
// training rows' features ph, solved directly, as predictions of r on the
// held-out rows xH, with the tolerance an iterative fold solver's
// predictions meet and the shifted system's condition number.
func directRidgeFit(t *testing.T, r *rfModel, ph *mat.Dense, et []float64, xH mat.Matrix, alpha float64) (*mat.Dense, float64, float64) {
	t.Helper()
	var g mat.SymDense
	g.SymOuterK(1, ph.T())
	m, _ := g.Dims()
	b := mat.NewVecDense(m, nil)
	b.MulVec(ph.T(), mat.NewVecDense(len(et), et))
	want, err := choleskySolve(&g, alpha, b.RawVector().Data)
	if err != nil {
		t.Fatal(err)
	}
	// The fold solver is iterative with normwise backward error krylovTol:
	// the relative forward error is at most about 2 kappa krylovTol, kappa
	// the condition number of the shifted system (the Gram's nonzero
	// spectrum is the kernel's).
	var eig mat.EigenSym
	if !eig.Factorize(&g, false) {
		t.Fatal("eigendecomposition failed")
	}
	ev := eig.Values(nil)
	kappa := (ev[len(ev)-1] + alpha) / (math.Max(ev[0], 0) + alpha)
	// The predictions are the model's at theta_f + dtheta on the held-out
	// rows, linear in dtheta (phi(x_H) dtheta): their error is at most
	// ||phi(x_H)||_F times dtheta's.
	wantPred, err := r.PredictShifted(context.Background(), xH, want)
	if err != nil {
		t.Fatal(err)
	}
	tol := (2*kappa*krylovTol+1e-12)*mat.Norm(r.phi(xH), 2)*floats.Norm(want, 2) + 1e-12
	return wantPred, tol, kappa
}

// rfGramModel is rfModel with its own Gram (phi^T phi, phi^T e), counting
// the calls.
type rfGramModel struct {
	*rfModel
	grams, jacobians int
}

func (r *rfGramModel) Jacobian(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	r.jacobians++
	return r.rfModel.Jacobian(ctx, x)
}

func (r *rfGramModel) Gram(_ context.Context, x mat.Matrix, e []float64, _ []float64) (*mat.SymDense, []float64, error) {
	r.grams++
	ph := r.phi(x)
	n, m := ph.Dims()
	g := new(mat.SymDense)
	g.SymOuterK(1, ph.T())
	b := make([]float64, m)
	mat.NewVecDense(m, b).MulVec(ph.T(), mat.NewVecDense(n, e))
	return g, b, nil
}

// rfBatchModel is rfKernelModel with shifts in batches, counting the
// batches.
type rfBatchModel struct {
	rfKernelModel
	calls int
}

func (r *rfBatchModel) PredictShifts(ctx context.Context, shifts []framework.Shift) ([]*mat.Dense, error) {
	r.calls++
	return jacobian.PredictShiftsEach(ctx, r.rfKernelModel, shifts)
}

// With the CV search on a correlated design, lazy must move the model: the
// reduced model beats the full model (dropout) on the dropped data.
func TestLazyCVImprovesOnDropout(t *testing.T) {
	ctx := context.Background()
	r := newRF(4, 30, 9)
	p := problemFor(t, r, 200, 50, 4, 19)
	f := framework.Feature{Name: "x1", Columns: []int{0}}
	got, err := Estimator{Folds: 4}.Reduce(ctx, p, f)
	if err != nil {
		t.Fatal(err)
	}
	if math.IsInf(got.Stats["lambda"], 1) {
		t.Fatalf("lazy chose no update although x1 carries signal the full model must unlearn")
	}
	// Dropping x1 (coefficient 2, correlation 0.9 with x2) leaves a
	// residual 1.8 x2 + noise that the random features can fit.
	xd := p.Drop(p.XEval, f)
	full, _ := r.Predict(ctx, xd)
	mse := func(pred *mat.Dense) float64 {
		s := 0.0
		for i, y := range p.YEval {
			d := y - pred.At(i, 0)
			s += d * d
		}
		return s / float64(len(p.YEval))
	}
	t.Logf("lambda %.3g: reduced mse %.3f, dropout mse %.3f", got.Stats["lambda"], mse(got.Pred), mse(full))
	if mse(got.Pred) >= mse(full) {
		t.Errorf("lazy reduced model (mse %.3f) no better than the full model on dropped data (mse %.3f)", mse(got.Pred), mse(full))
	}
}

// faultyRF is rfModel whose PredictShifted misbehaves from its after-th
// call on: fault returns the error to give, or panics.
type faultyRF struct {
	*rfModel
	mu    sync.Mutex
	calls int
	after int
	fault func() error
}

func (r *faultyRF) PredictShifted(ctx context.Context, x mat.Matrix, d []float64) (*mat.Dense, error) {
	r.mu.Lock()
	r.calls++
	n := r.calls
	r.mu.Unlock()
	if n > r.after {
		if err := r.fault(); err != nil {
			return nil, err
		}
	}
	return r.rfModel.PredictShifted(ctx, x, d)
}

// A backend that fails or panics inside a cross-validation fold (its shifted
// predictions run in goroutines of their own) fails the feature with an
// error: no
// crash, and no fold silently left out of the CV error, even when the
// backend's error reads as a cancellation while the caller's context is
// alive. A full model whose train predictions are not finite is an error
// too, not a penalty chosen from NaN errors.
func TestLazyFaultsInFolds(t *testing.T) {
	ctx := context.Background()
	f := framework.Feature{Name: "x1", Columns: []int{0}}
	for name, fault := range map[string]func() error{
		"error":           func() error { return errors.New("backend bug") },
		"panic":           func() error { panic("backend bug") },
		"cancelled-error": func() error { return fmt.Errorf("plugin: %w", context.Canceled) },
	} {
		r := &faultyRF{rfModel: newRF(4, 30, 9), after: 4, fault: fault}
		p := problemFor(t, r, 200, 50, 4, 19)
		_, err := Estimator{Folds: 4}.Reduce(ctx, p, f)
		if err == nil || !strings.Contains(err.Error(), "cross-validation") {
			t.Errorf("%s: got %v, want a cross-validation error", name, err)
		}
	}
	nan := &faultyRF{rfModel: newRF(4, 30, 9), after: 1 << 30}
	p := problemFor(t, nan, 200, 50, 4, 19)
	nan.theta[0] = math.NaN()
	if _, err := (Estimator{}).Reduce(ctx, p, f); err == nil || !strings.Contains(err.Error(), "not finite") {
		t.Errorf("NaN predictions: got %v, want a not-finite error", err)
	}
}

func TestLazyNeedsGradients(t *testing.T) {
	p := &framework.Problem{BackendName: "forest", Full: modelOnly{}}
	_, err := Estimator{Folds: 4}.Reduce(context.Background(), p, framework.Feature{Name: "x", Columns: []int{0}})
	if !errors.Is(err, framework.ErrUsage) {
		t.Fatalf("want a usage error, got %v", err)
	}
}

type modelOnly struct{}

func (modelOnly) Fit(context.Context, mat.Matrix, []float64) error { return nil }
func (modelOnly) Predict(context.Context, mat.Matrix) (*mat.Dense, error) {
	return nil, nil
}

// The search must find the minimum of unimodal curves wherever it lies in
// the widened range, to the golden section's resolution, and call f about
// 18 times.
func TestSearchLogAlpha(t *testing.T) {
	// Brent's method locates the minimum to within about 2 searchTol.
	resolution := 2 * searchTol
	// maxCalls counts the grid points walked (down to two below the
	// minimum), up to 4 widening steps for a minimum beyond the grid, and
	// Brent's steps; golden section alone took 20-24, the previous
	// parabolic-then-golden refinement up to 26.
	curves := []struct {
		name     string
		f        func(d float64) float64 // d = t - minimum
		maxCalls int
	}{
		{"smooth", func(d float64) float64 { return math.Log1p(d * d) }, 16},
		// CV-like: steep towards small alpha (the network overshoots),
		// flattening towards no update.
		{"asymmetric", func(d float64) float64 {
			if d < 0 {
				return 4 * d * d
			}
			return d * d / (1 + d)
		}, 18},
	}
	for _, c := range curves {
		for i, min := range []float64{-15.3, -9, -3.7, 0, 2.2, 5.5, 7.9} {
			calls, lowest := 0, math.Inf(1)
			f := func(ts []float64) ([]float64, error) {
				vs := make([]float64, len(ts))
				for i, t := range ts {
					calls++
					lowest = math.Min(lowest, t)
					vs[i] = c.f(t - min)
				}
				return vs, nil
			}
			best, v, err := searchLogAlpha(f, math.Inf(1), searchTol, 0)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(best-min) > resolution {
				t.Errorf("%s case %d: minimum at %v, found %v (f %v), want within %.3f", c.name, i, min, best, v, resolution)
			}
			t.Logf("%s case %d: %d evaluations, best %.3f", c.name, i, calls, best)
			if calls > c.maxCalls {
				t.Errorf("%s case %d: %d evaluations, want at most %d", c.name, i, calls, c.maxCalls)
			}
			// Small penalties are the expensive ones: the walk stops one
			// grid point below the one nearest the minimum (two when
			// that is the top of the grid).
			if floor := math.Min(math.Round(min/gridStep)*gridStep, gridHi-gridStep) - gridStep; lowest < floor-1e-9 && min > gridLo {
				t.Errorf("%s case %d: evaluated down to %v, want no lower than %v", c.name, i, lowest, floor)
			}
		}
	}
}

// TestSearchLogAlphaEdges: the search's ends: a monotone curve, a dip
// above the grid, a bump in the flat part before the dip.
func TestSearchLogAlphaEdges(t *testing.T) {
	resolution := 2 * searchTol
	// A flat curve that only rises towards small alpha (the no-update
	// regime): the best point is at the top of the widened range.
	best, _, _ := searchLogAlpha(func(ts []float64) ([]float64, error) {
		vs := make([]float64, len(ts))
		for i, t := range ts {
			vs[i] = math.Exp(-t)
		}
		return vs, nil
	}, math.Inf(1), searchTol, 0)
	if best < widenHi-resolution {
		t.Errorf("monotone curve: best %v, want the top of the range %v", best, widenHi)
	}
	// The same with the no-update error known and below the grid's top:
	// no update, after the three grid points of the walk and one above.
	calls := 0
	best, v, _ := searchLogAlpha(func(ts []float64) ([]float64, error) {
		vs := make([]float64, len(ts))
		for i, t := range ts {
			calls++
			vs[i] = math.Exp(-t)
		}
		return vs, nil
	}, 0, searchTol, 0)
	if !math.IsInf(best, 1) || v != 0 || calls != 4 {
		t.Errorf("monotone curve, no update known best: best %v (f %v) after %d evaluations, want +Inf (0) after 4", best, v, calls)
	}
	// A dip just above the grid, below the no-update error although the
	// grid's top is above it: found, not skipped.
	best, _, _ = searchLogAlpha(func(ts []float64) ([]float64, error) {
		vs := make([]float64, len(ts))
		for i, t := range ts {
			vs[i] = 1 + 0.1*(t-6)*(t-6)
		}
		return vs, nil
	}, 1.3, searchTol, 0)
	if math.Abs(best-6) > resolution {
		t.Errorf("dip above the grid: best %v, want 6", best)
	}
	// A bump in the flat part (the error rises from t = 4 to 2) must not
	// end the walk before the dip at -3.
	best, _, _ = searchLogAlpha(func(ts []float64) ([]float64, error) {
		vs := make([]float64, len(ts))
		for i, t := range ts {
			vs[i] = 1 + 0.001*math.Exp(-(t-2)*(t-2)) - 0.5*math.Exp(-(t+3)*(t+3)/4)
		}
		return vs, nil
	}, 1, searchTol, 0)
	if math.Abs(best+3) > resolution {
		t.Errorf("bump before the dip: best %v, want -3", best)
	}
}

// TestSearchLogAlphaFlat: the held-out search's flat part, and candidates
// unusable everywhere.
func TestSearchLogAlphaFlat(t *testing.T) {
	resolution := 2 * searchTol
	// With flat (the held-out search's): the same bump as in
	// TestSearchLogAlphaEdges, 0.1% of the no-update error, is within the flat part and the dip is still found;
	// a rise to 1.5 times the no-update error below a best top ends the
	// walk there, without the point below it (0), and with the top no
	// better than no update, the search returns no update.
	for _, c := range []struct {
		name   string
		f      func(t float64) float64
		best   float64
		lowest float64
	}{
		{"bump before the dip", func(t float64) float64 {
			return 1 + 0.001*math.Exp(-(t-2)*(t-2)) - 0.5*math.Exp(-(t+3)*(t+3)/4)
		}, -3, math.Inf(-1)},
		{"overshoot below the top", func(t float64) float64 { return 1 + math.Exp(-t)/math.Exp(-2)/2 }, math.Inf(1), 2},
		// The top beats no update, the rise below it is 50% above no
		// update, and a dip lies beyond: the walk stops at the rise and
		// refines around the top (the rule's price; without it the dip
		// at 0 is found, below).
		{"dip past an overshoot", dipPastOvershoot, 4.5, 2},
	} {
		lowest := math.Inf(1)
		best, _, err := searchLogAlpha(func(ts []float64) ([]float64, error) {
			vs := make([]float64, len(ts))
			for i, t := range ts {
				lowest = math.Min(lowest, t)
				vs[i] = c.f(t)
			}
			return vs, nil
		}, 1, searchTol, heldOutFlat)
		if err != nil {
			t.Fatalf("flat, %s: %v", c.name, err)
		}
		if math.IsInf(c.best, 1) != math.IsInf(best, 1) || (!math.IsInf(c.best, 1) && math.Abs(best-c.best) > resolution) {
			t.Errorf("flat, %s: best %v, want %v", c.name, best, c.best)
		}
		if lowest < c.lowest {
			t.Errorf("flat, %s: evaluated down to %v, want no lower than %v", c.name, lowest, c.lowest)
		}
	}
	if best, _, err := searchLogAlpha(func(ts []float64) ([]float64, error) {
		vs := make([]float64, len(ts))
		for i, t := range ts {
			vs[i] = dipPastOvershoot(t)
		}
		return vs, nil
	}, 1, searchTol, 0); err != nil || math.Abs(best) > resolution {
		t.Errorf("without flat, dip past an overshoot: best %v (%v), want 0", best, err)
	}
	// Unusable candidates everywhere: +Inf, no error.
	if _, v, err := searchLogAlpha(func(ts []float64) ([]float64, error) {
		vs := make([]float64, len(ts))
		for i := range vs {
			vs[i] = math.Inf(1)
		}
		return vs, nil
	}, math.Inf(1), searchTol, 0); err != nil || !math.IsInf(v, 1) {
		t.Errorf("all unusable: got %v, %v", v, err)
	}
}

// TestCholeskySolveIllConditioned: a ridge system that is positive definite
// but beyond gonum's condition threshold (a dropped feature's zero row and
// column with a tiny penalty) is solved, with the small backward error a
// backward-stable solver guarantees, instead of failing as singular.
func TestCholeskySolveIllConditioned(t *testing.T) {
	const alpha = 1e-20
	a := mat.NewSymDense(3, []float64{
		4, 1, 0,
		1, 3, 0,
		0, 0, 0,
	})
	r := []float64{1, 2, 0}
	x, err := choleskySolve(a, alpha, r)
	if err != nil {
		t.Fatalf("ill-conditioned system: %v", err)
	}
	// The residual of (A + alpha I) x = r, against ||A + alpha I|| ||x||
	// + ||r||: the normwise backward error.
	s := mat.NewSymDense(3, nil)
	s.CopySym(a)
	for i := 0; i < 3; i++ {
		s.SetSym(i, i, s.At(i, i)+alpha)
	}
	var res mat.VecDense
	res.MulVec(s, mat.NewVecDense(3, x))
	res.SubVec(&res, mat.NewVecDense(3, r))
	be := mat.Norm(&res, 2) / (mat.Norm(s, 2)*mat.Norm(mat.NewVecDense(3, x), 2) + mat.Norm(mat.NewVecDense(3, r), 2))
	if be > 1e-14 {
		t.Errorf("backward error %g, want at most 1e-14 (x = %v)", be, x)
	}
	// The determined part is the plain solve: x_12 = [[4 1] [1 3]]^-1 [1 2].
	if math.Abs(x[0]-1.0/11) > 1e-14 || math.Abs(x[1]-7.0/11) > 1e-14 || x[2] != 0 {
		t.Errorf("x = %v, want (1/11, 7/11, 0)", x)
	}
}

// searchNear, started near the minimum (within nearStep, the baseline's
// penalty for a feature's), must find it to Brent's resolution in fewer
// evaluations than the grid walk takes; started far from it, it must
// still find it by walking.
func TestSearchNear(t *testing.T) {
	curves := []struct {
		name string
		f    func(d float64) float64
	}{
		{"smooth", func(d float64) float64 { return math.Log1p(d * d) }},
		{"asymmetric", func(d float64) float64 {
			if d < 0 {
				return 4 * d * d
			}
			return d * d / (1 + d)
		}},
	}
	for _, lowLast := range []bool{false, true} {
		for _, tol := range []float64{searchTol, defaultSubsampleTol} {
			for _, c := range curves {
				for _, min := range []float64{-9, -3.7, 0, 2.2, 5.5} {
					for _, off := range []float64{0, 0.3, -0.45, 1.7, -3.1} {
						calls := 0
						f := func(ts []float64) ([]float64, error) {
							vs := make([]float64, len(ts))
							for i, t := range ts {
								calls++
								vs[i] = c.f(t - min)
							}
							return vs, nil
						}
						best, v, err := searchNear(f, math.Inf(1), min+off, tol, lowLast)
						if err != nil {
							t.Fatal(err)
						}
						if math.Abs(best-min) > 2*tol {
							t.Errorf("%s, tol %g, minimum %v, start %+v from it: found %v (f %v), want within %.3f", c.name, tol, min, off, best, v, 2*tol)
						}
						// Three points, the walk (one a nearStep), Brent's.
						want := 3 + int(math.Ceil(math.Abs(off)/nearStep)) + brentIterations
						if math.Abs(off) <= nearStep {
							want = 9 // the grid walk's searchLogAlpha takes 10-18
						}
						if c.name == "smooth" {
							// A smooth curve's parabolas find its minimum: at
							// the start, the first three points alone (their
							// parabola's vertex is the start); else the walk
							// and two of Brent's steps, which stops where a
							// parabolic step is within tol/4.
							want = 3
							if off != 0 {
								want = 3 + int(math.Ceil(math.Abs(off)/nearStep)) + 2
							}
						}
						if calls > want {
							t.Errorf("%s, tol %g, minimum %v, start %+v from it: %d evaluations, want at most %d", c.name, tol, min, off, calls, want)
						}
						t.Logf("%s, tol %g, minimum %v, start %+v: %d evaluations, best %.3f", c.name, tol, min, off, calls, best)
						if lowLast {
							// On a unimodal curve, the point below is skipped
							// only where it cannot matter: the same result.
							b0, v0, err := searchNear(f, math.Inf(1), min+off, tol, false)
							if err != nil {
								t.Fatal(err)
							}
							if b0 != best || v0 != v {
								t.Errorf("%s, tol %g, minimum %v, start %+v: lowLast found %v (f %v), without it %v (f %v)", c.name, tol, min, off, best, v, b0, v0)
							}
						}
					}
				}
			}
		}
	}
}

// TestSearchNearMonotone: searchNear on a curve that only falls.
func TestSearchNearMonotone(t *testing.T) {
	// A curve that only falls towards large penalties, no better than no
	// update (0.5): the walk up stops one step above the bracket, four
	// evaluations, with an error no better than no update's; with no
	// update worse (10), the walk goes on up.
	// With lowLast the point below the start is not asked for: three.
	for _, lowLast := range []bool{false, true} {
		for _, fInf := range []float64{0.5, 10} {
			calls := 0
			_, v, err := searchNear(func(ts []float64) ([]float64, error) {
				vs := make([]float64, len(ts))
				for i, t := range ts {
					calls++
					vs[i] = 1 + math.Exp(-t)
				}
				return vs, nil
			}, fInf, -2, searchTol, lowLast)
			if err != nil {
				t.Fatal(err)
			}
			want := 4
			if lowLast {
				want = 3
			}
			if fInf == 0.5 && (calls != want || v < fInf) {
				t.Errorf("no update best (lowLast %v): %d evaluations, error %v; want %d and no better than %v", lowLast, calls, v, want, fInf)
			}
			if fInf == 10 && calls <= 4 {
				t.Errorf("no update worse than the penalties: %d evaluations, want the walk to the top", calls)
			}
		}
	}
}

// searchNear does not refine where the error is flat around its best
// point (a rise below flatNear to both neighbours): a curve 1% deep over
// ten decades, started at its minimum, takes the first three points; one
// deep enough to resolve, more.
func TestSearchNearFlat(t *testing.T) {
	for _, c := range []struct {
		depth  float64
		refine bool
	}{{0.01, false}, {10, true}} {
		calls := 0
		f := func(ts []float64) ([]float64, error) {
			vs := make([]float64, len(ts))
			for i, tt := range ts {
				calls++
				d := (tt - 0.1) / 5 // the minimum 0.1 from the start, off the vertex rule's reach
				vs[i] = 1 + c.depth*(d*d)
			}
			return vs, nil
		}
		best, _, err := searchNear(f, math.Inf(1), 0, searchTol, false)
		if err != nil {
			t.Fatal(err)
		}
		if refined := calls > 3; refined != c.refine {
			t.Errorf("depth %g: %d evaluations (best %v), want refinement %v", c.depth, calls, best, c.refine)
		}
	}
}

// dipPastOvershoot is a held-out error curve whose best point near the
// grid's top (4.5, 0.95 against no update's 1) is followed, going down, by
// an overshoot (1.5 at t = 2) and then a deeper dip (0.4 at t = 0).
func dipPastOvershoot(t float64) float64 {
	return 1 - 0.05*math.Exp(-(t-4.5)*(t-4.5)) + 0.5*math.Exp(-(t-2)*(t-2)/0.5) - 0.6*math.Exp(-t*t/0.2)
}

// A dense dual reduction gives its kernel's memory back when done
// (kernelBuffers), and the next reduction, whose kernel is written into it
// (jacobian.KernelInto where the model has it, as rfIntoModel does),
// gives the same numbers as one in fresh memory.
func TestLazyKernelMemoryReused(t *testing.T) {
	r := newRF(4, 150, 3)
	f := framework.Feature{Name: "x1", Columns: []int{0}}
	fresh := problemFor(t, rfKernelModel{r}, 100, 40, 4, 11)
	want, err := Estimator{Folds: 4}.Reduce(context.Background(), fresh, f)
	if err != nil {
		t.Fatal(err)
	}
	into := &rfIntoModel{rfKernelModel: rfKernelModel{r}}
	p := problemFor(t, into, 100, 40, 4, 11)
	for i := range 2 {
		got, err := Estimator{Folds: 4}.Reduce(context.Background(), p, f)
		if err != nil {
			t.Fatal(err)
		}
		if kernelBuffers.Len() == 0 {
			t.Fatalf("reduction %d: the kernel's memory was not given back", i+1)
		}
		if !mat.Equal(got.Pred, want.Pred) || got.Stats[statLambda] != want.Stats[statLambda] {
			t.Fatalf("reduction %d: lambda %v, want %v; predictions differ: %v", i+1, got.Stats[statLambda], want.Stats[statLambda], !mat.Equal(got.Pred, want.Pred))
		}
	}
	if into.reused == 0 {
		t.Fatal("no kernel was written into a reused buffer")
	}
}

// rfIntoModel is a Kerneler with KernelInto, counting the calls whose
// destination held the kernel.
type rfIntoModel struct {
	rfKernelModel
	reused int
}

func (m *rfIntoModel) KernelInto(ctx context.Context, x1, x2 mat.Matrix, dst []float64) (*mat.Dense, error) {
	k, err := m.Kernel(ctx, x1, x2)
	if err != nil {
		return nil, err
	}
	r, c := k.Dims()
	if cap(dst) < r*c {
		return k, nil
	}
	m.reused++
	out := mat.NewDense(r, c, dst[:r*c])
	out.Copy(k)
	return out, nil
}

// vertexWithin: a symmetric parabola's vertex is at 0, a skewed one's
// beyond a small tolerance, and an unusable end (infinite error) makes no
// parabola.
func TestVertexWithin(t *testing.T) {
	for _, c := range []struct {
		fl, f0, fr, tol float64
		want            bool
	}{
		{2, 1, 2, 0.01, true},
		{2, 1, 3, 0.01, false}, // vertex at -h/6
		{2, 1, 3, 0.2, true},
		{math.Inf(1), 1, 2, 0.2, false},
		{2, 1, math.Inf(1), 0.2, false},
	} {
		if got := vertexWithin(c.fl, c.f0, c.fr, 0.5, c.tol); got != c.want {
			t.Errorf("vertexWithin(%v, %v, %v, 0.5, %v) = %v, want %v", c.fl, c.f0, c.fr, c.tol, got, c.want)
		}
	}
}
