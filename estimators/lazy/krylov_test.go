package lazy

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/internal/linalg"
)

// decayingSpectrum returns n eigenvalues, ascending: null zeros, then 100
// rate^(n-1-i).
func decayingSpectrum(n, null int, rate float64) []float64 {
	ev := make([]float64, n)
	for i := null; i < n; i++ {
		ev[i] = 100 * math.Pow(rate, float64(n-1-i))
	}
	return ev
}

// normalVector returns n seeded standard normal values.
func normalVector(n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, seed))
	r := make([]float64, n)
	for i := range r {
		r[i] = rng.NormFloat64()
	}
	return r
}

// psdWithSpectrum returns Q diag(ev) Q^T for a seeded random orthogonal Q.
func psdWithSpectrum(ev []float64, seed uint64) *mat.SymDense {
	n := len(ev)
	rng := rand.New(rand.NewPCG(seed, 11))
	g := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q mat.Dense
	qr.QTo(&q)
	var qd mat.Dense
	qd.Apply(func(_, j int, v float64) float64 { return v * ev[j] }, &q)
	var a mat.Dense
	a.Mul(&qd, q.T())
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			s.SetSym(i, j, 0.5*(a.At(i, j)+a.At(j, i)))
		}
	}
	return s
}

// The Krylov solver's answers must be what its documentation promises: each
// solution has a normwise backward error of at most krylovTol (checked with
// the true residual, not the solver's own estimate); large shifts need few
// steps; a right-hand side in an invariant subspace is solved exactly when
// the space is exhausted (TestKrylovExhausted); a zero right-hand side
// gives zeros (TestKrylovUnusable).
func TestKrylovSolves(t *testing.T) {
	ctx := context.Background()
	const n = 150
	// A decaying spectrum (as Grams of gradient features have) with a
	// null space of 10 dimensions.
	ev := decayingSpectrum(n, 10, 0.9)
	a := psdWithSpectrum(ev, 1)
	norm := ev[n-1] // ||A||_2
	r := normalVector(n, 2)
	meanDiag := floats.Sum(ev) / n
	var shifts []float64
	for _, t := range []float64{4, 2, 0, -2, -4, -8} {
		shifts = append(shifts, meanDiag*math.Pow(10, t))
	}
	kr := newKrylov(fullOp{fullOf(a)}, r)
	for c, sigma := range shifts {
		// One shift at a time, largest first, as the search asks.
		x, usable, _ := kr.solveMany(ctx, []float64{sigma})
		if !usable[0] {
			t.Fatalf("shift %g: unusable", sigma)
		}
		xv := x.RawRowView(0)
		res := mat.NewVecDense(n, nil)
		res.MulVec(a, mat.NewVecDense(n, xv))
		res.AddScaledVec(res, sigma, mat.NewVecDense(n, xv))
		res.SubVec(res, mat.NewVecDense(n, r))
		backward := mat.Norm(res, 2) / ((kr.anorm+sigma)*floats.Norm(xv, 2) + floats.Norm(r, 2))
		if backward > krylovTol*1.001 {
			t.Errorf("shift %g: backward error %.3g, want <= %g (%d steps)", sigma, backward, krylovTol, kr.steps())
		}
		// The tolerance is relative to the solver's estimate of ||A||,
		// which must not overstate it by more than Gershgorin can (3x).
		if kr.anorm > 3*norm || kr.anorm < 0.5*norm {
			t.Errorf("||A|| estimate %g, true %g", kr.anorm, norm)
		}
		t.Logf("shift 10^%d mean diag: %d steps, backward error %.2g", []int{4, 2, 0, -2, -4, -8}[c], kr.steps(), backward)
		if c == 0 && kr.steps() > 10 {
			t.Errorf("the largest shift took %d steps, want few", kr.steps())
		}
	}
}

// TestKrylovExhausted: a Krylov space exhausted (a right-hand side in a
// rank-5 range, or all of R^n) gives the direct solver's solution.
func TestKrylovExhausted(t *testing.T) {
	ctx := context.Background()
	r := normalVector(150, 2)
	// Rank 5 and r in its range: the Krylov space is exhausted after 5
	// steps, and the solution is exact.
	ev5 := make([]float64, 40)
	for i := 35; i < 40; i++ {
		ev5[i] = float64(i - 34)
	}
	a5 := psdWithSpectrum(ev5, 3)
	r5 := make([]float64, 40)
	mat.NewVecDense(40, r5).MulVec(a5, mat.NewVecDense(40, r[:40]))
	k5 := newKrylov(fullOp{fullOf(a5)}, r5)
	x5, _, _ := k5.solveMany(ctx, []float64{1e-12})
	if k5.steps() > 5 {
		t.Errorf("rank 5: %d steps, want at most 5", k5.steps())
	}
	want, err := choleskySolve(a5, 1e-12, r5)
	if err == nil {
		d := make([]float64, 40)
		floats.SubTo(d, x5.RawRowView(0), want)
		// Both solve a system of condition ~5e12: compare at that scale.
		if rel := floats.Norm(d, 2) / floats.Norm(want, 2); rel > 1e-2 {
			t.Errorf("rank 5: relative difference from Cholesky %.3g", rel)
		}
	}

	// All of R^n: with no shift and a spread spectrum the basis grows to
	// n, where the solution is that of a direct solver.
	ev8 := []float64{1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1, 10}
	a8 := psdWithSpectrum(ev8, 4)
	k8 := newKrylov(fullOp{fullOf(a8)}, r[:8])
	x8, _, _ := k8.solveMany(ctx, []float64{0})
	if !k8.exact || k8.steps() != 8 {
		t.Errorf("n = 8: exact %v after %d steps, want exact after 8", k8.exact, k8.steps())
	}
	if want, err := choleskySolve(a8, 0, r[:8]); err != nil {
		t.Error(err)
	} else {
		d := make([]float64, 8)
		floats.SubTo(d, x8.RawRowView(0), want)
		// Condition 1e7: both agree to about 1e7 n eps.
		if rel := floats.Norm(d, 2) / floats.Norm(want, 2); rel > 1e-7 {
			t.Errorf("n = 8: relative difference from Cholesky %.3g", rel)
		}
	}
}

// TestKrylovUnusable: what the solver refuses (NaN in r or A, a singular
// system without shift), a cancelled context, and a zero right-hand side.
func TestKrylovUnusable(t *testing.T) {
	ctx := context.Background()
	const n = 150
	a := psdWithSpectrum(decayingSpectrum(n, 10, 0.9), 1)
	r := normalVector(n, 2)
	// Not finite: r or A with a NaN is unusable at once, not after n
	// steps of NaN.
	rNaN := append([]float64(nil), r...)
	rNaN[3] = math.NaN()
	kn := newKrylov(fullOp{fullOf(a)}, rNaN)
	if _, usable, err := kn.solveMany(ctx, []float64{1}); err != nil || usable[0] || kn.steps() != 0 {
		t.Errorf("NaN in r: usable %v, %d steps, %v", usable, kn.steps(), err)
	}
	aNaN := fullOf(a)
	aNaN.Data[5*n+7] = math.NaN()
	kn = newKrylov(fullOp{aNaN}, r)
	if _, usable, err := kn.solveMany(ctx, []float64{1}); err != nil || usable[0] || kn.steps() > 1 {
		t.Errorf("NaN in A: usable %v, %d steps, %v", usable, kn.steps(), err)
	}
	// A singular system found exactly (A = diag(1, 1, 0), r = (1, 1, 1),
	// no shift: the space is exhausted after two steps) is unusable, not
	// a solution of norm 1e16.
	diag := mat.NewSymDense(3, []float64{1, 0, 0, 0, 1, 0, 0, 0, 0})
	if x, usable, _ := newKrylov(fullOp{fullOf(diag)}, []float64{1, 1, 1}).solveMany(ctx, []float64{0}); usable[0] {
		t.Errorf("diag(1, 1, 0) without shift: usable, x = %v", x.RawRowView(0))
	}
	// A cancelled context stops the growth.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := newKrylov(fullOp{fullOf(a)}, r).solveMany(cctx, []float64{1e-9}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}

	// Zero right-hand side.
	z, usable, _ := newKrylov(fullOp{fullOf(a)}, make([]float64, n)).solveMany(ctx, []float64{1, 2})
	if !usable[0] || !usable[1] || mat.Norm(z, 1) != 0 {
		t.Errorf("zero right-hand side: usable %v, norm %g", usable, mat.Norm(z, 1))
	}
}

// shiftedSolve agrees with a Cholesky solve whichever way it goes: by
// Krylov steps for a large shift, by Cholesky when the steps would cost
// more (a tiny shift on a spread spectrum).
func TestShiftedSolve(t *testing.T) {
	ctx := context.Background()
	const n = 120
	ev := make([]float64, n)
	for i := range ev {
		ev[i] = math.Pow(0.85, float64(i))
	}
	a := psdWithSpectrum(ev, 5)
	r := make([]float64, n)
	for i := range r {
		r[i] = math.Cos(float64(i))
	}
	for _, sigma := range []float64{1, 1e-9} {
		steps := newKrylov(fullOp{fullOf(a)}, r)
		_, byKrylov, _ := steps.solveWithin(ctx, sigma, n/6)
		got, err := shiftedSolve(ctx, upperOp{a.RawSymmetric()}, a, sigma, r)
		if err != nil {
			t.Fatal(err)
		}
		want, err := choleskySolve(a, sigma, r)
		if err != nil {
			t.Fatal(err)
		}
		d := make([]float64, n)
		floats.SubTo(d, got, want)
		kappa := (ev[0] + sigma) / (ev[n-1] + sigma)
		// Krylov: forward error up to 2 kappa krylovTol; Cholesky: equal.
		tol := 2 * kappa * krylovTol
		if !byKrylov {
			tol = 0
		}
		if rel := floats.Norm(d, 2) / floats.Norm(want, 2); rel > tol {
			t.Errorf("shift %g (Krylov %v): relative difference %.3g, want <= %.3g", sigma, byKrylov, rel, tol)
		}
		if byKrylov != (sigma == 1) {
			t.Errorf("shift %g: solved by Krylov %v, want %v", sigma, byKrylov, sigma == 1)
		}
	}
}

// fullOf returns the symmetric a with both triangles filled, as newKrylov
// takes it.
func fullOf(a *mat.SymDense) blas64.General { return linalg.Full(a).RawMatrix() }

// The energy rule's bounds must hold at every step: decrease_k <= r^T x*
// <= the Gauss-Radau bound (the exact decrease r^T x* from a Cholesky
// solve), on a spread spectrum with a null space, for large and small
// shifts; and solveEnergy's solution must have a true energy error
// ||x* - x||^2_{A + sigma I} of at most tau times its decrease.
func TestKrylovEnergyBounds(t *testing.T) {
	ctx := context.Background()
	const n = 150
	a := psdWithSpectrum(decayingSpectrum(n, 10, 0.93), 7)
	r := normalVector(n, 3)
	for _, sigma := range []float64{100, 1, 1e-2} {
		xs, err := choleskySolve(a, sigma, r)
		if err != nil {
			t.Fatal(err)
		}
		exact := floats.Dot(r, xs)
		kr := newKrylov(fullOp{fullOf(a)}, r)
		for kr.steps() < 60 && !kr.exact {
			if err := kr.extend(); err != nil {
				t.Fatal(err)
			}
			if _, ok := kr.coefficients(sigma); !ok {
				t.Fatalf("shift %g step %d: coefficients failed", sigma, kr.steps())
			}
			ub, ok := kr.radauDecrease(sigma)
			d := kr.decrease()
			slack := 1e-10 * exact
			if !ok || d > exact+slack || ub < exact-slack {
				t.Fatalf("shift %g step %d: decrease %.12g, exact %.12g, Radau bound %.12g (ok %v)", sigma, kr.steps(), d, exact, ub, ok)
			}
		}
		for _, tau := range []float64{1e-1, 1e-2, 1e-4} {
			kr := newKrylov(fullOp{fullOf(a)}, r)
			x, ok, err := kr.solveEnergy(ctx, sigma, tau, n)
			if err != nil || !ok {
				t.Fatalf("shift %g tau %g: %v %v", sigma, tau, ok, err)
			}
			d := make([]float64, n)
			floats.SubTo(d, x, xs)
			ad := mat.NewVecDense(n, nil)
			ad.MulVec(a, mat.NewVecDense(n, d))
			energy := floats.Dot(d, ad.RawVector().Data) + sigma*floats.Dot(d, d)
			if energy > tau*floats.Dot(r, x) {
				t.Errorf("shift %g tau %g: energy error %.3g above tau x decrease %.3g (%d steps)", sigma, tau, energy, tau*floats.Dot(r, x), kr.steps())
			}
			t.Logf("shift %g tau %g: %d steps, energy error %.3g of decrease %.3g", sigma, tau, kr.steps(), energy, floats.Dot(r, x))
		}
	}
}
