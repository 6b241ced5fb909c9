package estimators

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
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

// The matrix-free solve must give the closed form's predictions, dual
// (M > n1) and primal, by the model's products or its Jacobian. The solve
// stops at a backward error of matrixFreeTol = 1e-6; the predictions then
// agree to about kappa 1e-6 of their scale, with kappa = (||G|| + alpha) /
// alpha at most ~1e3 here (alpha >= 3): 1e-3 relative to the update's
// largest prediction is the check.
func TestLazyMatrixFreeMatchesClosedForm(t *testing.T) {
	for i, tc := range []struct {
		name       string
		m          int
		multiplier bool
	}{
		{"primal from Jacobian", 20, false},
		{"dual from Jacobian", 150, false},
		{"primal by products", 20, true},
		{"dual by products", 150, true},
	} {
		r := newRF(4, tc.m, uint64(i+1))
		var model framework.Model = r
		if tc.multiplier {
			model = rfMultiplierModel{r}
		}
		p := problemFor(t, model, 100, 40, 4, uint64(i+10))
		f := framework.Feature{Name: "x1", Columns: []int{0}}
		base, _ := r.Predict(context.Background(), p.Drop(p.XEval, f))
		for _, alpha := range []float64{3, 100} {
			got, err := Lazy{Folds: 4, Lambda: alpha, Memory: tinyMemory}.Reduce(context.Background(), p, f)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if got.Stats[statMethod] != 1 || got.Stats[statSteps] < 1 {
				t.Fatalf("%s: not solved matrix-free: stats %v", tc.name, got.Stats)
			}
			want := wantLazy(r, p, f, alpha)
			scale := 0.0
			for k, w := range want {
				scale = math.Max(scale, math.Abs(w-base.At(k, 0)))
			}
			for k, w := range want {
				if g := got.Pred.At(k, 0); math.Abs(g-w) > 1e-3*scale {
					t.Fatalf("%s alpha %g: row %d: want %v, got %v (update scale %g)", tc.name, alpha, k, w, g, scale)
				}
			}
		}
	}
}

// With no more train rows than the subsample, the scaled path's
// cross-validation sees the same rows in the same folds as the dense one:
// the same penalty exactly, and the same predictions to the matrix-free
// solve's accuracy. A backward error of matrixFreeTol bounds the relative
// error of the dual solution by about 2 kappa matrixFreeTol, kappa =
// (lambda_max(K) + alpha) / alpha; the predictions' update (Phi_ev Phi^T a)
// inherits it: |dense - scaled| <= 4 kappa tol max |update| is the check.
func TestLazyScaledCVMatchesDense(t *testing.T) {
	r := newRF(4, 150, 3)
	p := problemFor(t, rfMultiplierModel{r}, 120, 40, 4, 21)
	f := framework.Feature{Name: "x1", Columns: []int{0}}
	dense, err := Lazy{Folds: 3}.Reduce(context.Background(), p, f)
	if err != nil {
		t.Fatal(err)
	}
	scaled, err := Lazy{Folds: 3, Memory: tinyMemory}.Reduce(context.Background(), p, f)
	if err != nil {
		t.Fatal(err)
	}
	alpha := dense.Stats[statLambda]
	if scaled.Stats[statLambda] != alpha || scaled.Stats[statSubsample] != 120 {
		t.Fatalf("penalty: dense %v, scaled %v (stats %v)", alpha, scaled.Stats[statLambda], scaled.Stats)
	}
	if math.IsInf(alpha, 1) {
		t.Fatalf("no update chosen: the check would prove nothing")
	}
	var k mat.SymDense
	k.SymOuterK(1, r.phi(p.Drop(p.XTrain, f)))
	var eig mat.EigenSym
	if !eig.Factorize(&k, false) {
		t.Fatal("eigen decomposition failed")
	}
	ev := eig.Values(nil)
	kappa := (ev[len(ev)-1] + alpha) / alpha
	base, _ := r.Predict(context.Background(), p.Drop(p.XEval, f))
	update := 0.0
	for i := 0; i < 40; i++ {
		update = math.Max(update, math.Abs(dense.Pred.At(i, 0)-base.At(i, 0)))
	}
	bound := 4 * kappa * matrixFreeTol * update
	t.Logf("kappa %g, bound %g, update %g", kappa, bound, update)
	for i := 0; i < 40; i++ {
		if d, s := dense.Pred.At(i, 0), scaled.Pred.At(i, 0); math.Abs(d-s) > bound {
			t.Fatalf("row %d: dense %v, scaled %v, bound %g (kappa %g)", i, d, s, bound, kappa)
		}
	}
}

// The cost model: dense where it fits and is cheaper, matrix-free where
// the kernel does not fit or costs more.
func TestChooseMethod(t *testing.T) {
	for _, tc := range []struct {
		n, m       int
		kernel, mf bool
		mem        float64
		want       solveMethod
	}{
		{200, 5000, true, true, DefaultMemory, methodDense},         // n^2 M below 60 Krylov steps' 4 n M
		{13333, 21601, true, true, DefaultMemory, methodMatrixFree}, // the kernel is 1.4 GB
		{6667, 40401, true, true, DefaultMemory, methodMatrixFree},  // fits, but n^2 M flops
		{20000, 100, false, true, DefaultMemory, methodDense},       // primal, M small
		{6667, 40401, true, false, DefaultMemory, methodDense},      // the products would need the 2 GB Jacobian
		{6667, 40401, true, true, 1 << 20, methodMatrixFree},        // the kernel is above a 1 MiB bound
	} {
		if got := chooseMethod(tc.n, tc.m, tc.kernel, tc.mf, tc.mem); got != tc.want {
			t.Errorf("n %d, m %d: %v, want %v", tc.n, tc.m, got, tc.want)
		}
	}
}
