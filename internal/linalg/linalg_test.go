package linalg

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// TestName checks that the binary says which implementation it runs on.
func TestName(t *testing.T) {
	want := "gonum"
	if openblasBuild {
		want = "openblas"
	}
	if Name != want {
		t.Fatalf("Name = %q, want %q", Name, want)
	}
}

// TestShiftedSolve solves (A + alpha I) x = b the way the lazy estimator
// does (A = Q T Q^T by Dsytrd and Dorgtr, then the tridiagonal system
// (T + alpha I) y = Q^T b by Dgtsv, x = Q y) and checks x against gonum's
// mat Cholesky solve, which under -tags openblas also runs on the swapped-in
// BLAS/LAPACK.
func TestShiftedSolve(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 7, 60, 201} {
		// A = X^T X / rows is symmetric positive semi-definite, rank-deficient
		// when rows < n, as lazy's Grams are.
		rows := n/2 + 1
		x := mat.NewDense(rows, n, nil)
		for i := range rows {
			for j := range n {
				x.Set(i, j, rng.NormFloat64())
			}
		}
		var a mat.SymDense
		a.SymOuterK(1/float64(rows), x.T())
		b := make([]float64, n)
		for i := range b {
			b[i] = rng.NormFloat64()
		}

		// The tridiagonal reduction, once for every alpha.
		raw := make([]float64, n*n)
		for i := range n {
			for j := range n {
				raw[i*n+j] = a.At(i, j)
			}
		}
		d, e, tau := make([]float64, n), make([]float64, max(n-1, 0)), make([]float64, max(n-1, 0))
		work := make([]float64, 1)
		LAPACK.Dsytrd(blas.Upper, n, raw, n, d, e, tau, work, -1)
		work = make([]float64, int(work[0]))
		LAPACK.Dsytrd(blas.Upper, n, raw, n, d, e, tau, work, len(work))
		LAPACK.Dorgtr(blas.Upper, n, raw, n, tau, work, -1)
		if int(work[0]) > len(work) {
			work = make([]float64, int(work[0]))
		}
		LAPACK.Dorgtr(blas.Upper, n, raw, n, tau, work, len(work))
		q := mat.NewDense(n, n, raw)

		for _, alpha := range []float64{1e-3, 0.5, 30} {
			// y = Q^T b, solve (T + alpha I) y' = y, x = Q y'.
			var qtb mat.VecDense
			qtb.MulVec(q.T(), mat.NewVecDense(n, b))
			y := append([]float64(nil), qtb.RawVector().Data...)
			dd := make([]float64, n)
			for i := range dd {
				dd[i] = d[i] + alpha
			}
			dl, du := append([]float64(nil), e...), append([]float64(nil), e...)
			if !LAPACK.Dgtsv(n, 1, dl, dd, du, y, 1) {
				t.Fatalf("n=%d alpha=%g: Dgtsv reports a singular system", n, alpha)
			}
			var got mat.VecDense
			got.MulVec(q, mat.NewVecDense(n, y))

			shifted := mat.NewSymDense(n, nil)
			shifted.CopySym(&a)
			for i := range n {
				shifted.SetSym(i, i, shifted.At(i, i)+alpha)
			}
			var chol mat.Cholesky
			if !chol.Factorize(shifted) {
				t.Fatalf("n=%d alpha=%g: Cholesky failed", n, alpha)
			}
			var want mat.VecDense
			if err := chol.SolveVecTo(&want, mat.NewVecDense(n, b)); err != nil {
				t.Fatal(err)
			}

			var diff mat.VecDense
			diff.SubVec(&got, &want)
			rel := mat.Norm(&diff, 2) / mat.Norm(&want, 2)
			// The condition number is at most (||A|| + alpha) / alpha.
			cond := (mat.Norm(&a, 2) + alpha) / alpha
			t.Logf("n=%d alpha=%g: relative difference %.2g (cond %.2g)", n, alpha, rel, cond)
			if tol := 1e-13 * cond * float64(n+1); rel > tol {
				t.Errorf("n=%d alpha=%g: relative difference %.3g from Cholesky, want <= %.3g", n, alpha, rel, tol)
			}
		}
	}
}
