package linalg

import (
	"math"
	"math/rand/v2"
	"testing"

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

// TestDgtsv solves shifted tridiagonal systems (T + alpha I) y = b the way
// the lazy estimator's Krylov solver does, by Dgtsv, and checks y against
// gonum's mat Cholesky solve of the same dense system, which under -tags
// openblas also runs on the swapped-in BLAS/LAPACK; a singular system is
// reported as such.
func TestDgtsv(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 7, 60, 201} {
		// A positive semi-definite T: the Lanczos T of a Gram.
		d, e := make([]float64, n), make([]float64, max(n-1, 0))
		for i := range d {
			d[i] = 2 + rng.Float64()
		}
		for i := range e {
			e[i] = rng.Float64() - 0.5
		}
		b := make([]float64, n)
		for i := range b {
			b[i] = rng.NormFloat64()
		}
		for _, alpha := range []float64{1e-3, 0.5, 30} {
			dd := make([]float64, n)
			for i := range dd {
				dd[i] = d[i] + alpha
			}
			dl, du := append([]float64(nil), e...), append([]float64(nil), e...)
			y := append([]float64(nil), b...)
			if !LAPACK.Dgtsv(n, 1, dl, dd, du, y, 1) {
				t.Fatalf("n=%d alpha=%g: Dgtsv reports a singular system", n, alpha)
			}
			dense := mat.NewSymDense(n, nil)
			for i := range n {
				dense.SetSym(i, i, d[i]+alpha)
				if i+1 < n {
					dense.SetSym(i, i+1, e[i])
				}
			}
			var chol mat.Cholesky
			if !chol.Factorize(dense) {
				t.Fatalf("n=%d alpha=%g: Cholesky failed", n, alpha)
			}
			var want mat.VecDense
			if err := chol.SolveVecTo(&want, mat.NewVecDense(n, b)); err != nil {
				t.Fatal(err)
			}
			var diff mat.VecDense
			diff.SubVec(mat.NewVecDense(n, y), &want)
			rel := mat.Norm(&diff, 2) / mat.Norm(&want, 2)
			// Diagonally dominant: condition below 3 / 1, so a few n eps.
			if tol := 1e-14 * float64(n+1); rel > tol {
				t.Errorf("n=%d alpha=%g: relative difference %.3g from Cholesky, want <= %.3g", n, alpha, rel, tol)
			}
		}
	}
	// [[1 1] [1 1]] is singular.
	if LAPACK.Dgtsv(2, 1, []float64{1}, []float64{1, 1}, []float64{1}, []float64{1, 2}, 1) {
		t.Error("Dgtsv solved a singular system")
	}
}

func TestFull(t *testing.T) {
	a := mat.NewSymDense(3, []float64{1, 2, 3, 0, 4, 5, 0, 0, 6}) // lower ignored
	want := mat.NewDense(3, 3, []float64{1, 2, 3, 2, 4, 5, 3, 5, 6})
	if got := Full(a); !mat.Equal(got, want) {
		t.Errorf("Full = %v, want %v", mat.Formatted(got), mat.Formatted(want))
	}
	if r, c := Full(new(mat.SymDense)).Dims(); r != 0 || c != 0 {
		t.Errorf("empty: %d x %d", r, c)
	}
}

// TestGram: Gram(a) is a a^T, symmetric to the bit, within the rounding of
// m-term dot products (m eps times the sum of |products|) of a product
// computed here, for shapes around the block size.
func TestGram(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, sh := range [][2]int{{1, 1}, {3, 5}, {gramBlock, 7}, {gramBlock + 1, 40}, {2*gramBlock + 17, 33}} {
		n, m := sh[0], sh[1]
		a := mat.NewDense(n, m, nil)
		for i := 0; i < n; i++ {
			for k := 0; k < m; k++ {
				a.Set(i, k, rng.NormFloat64())
			}
		}
		g := Gram(a)
		if r, c := g.Dims(); r != n || c != n {
			t.Fatalf("%d x %d: Gram is %d x %d", n, m, r, c)
		}
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				var want, abs float64
				for k := 0; k < m; k++ {
					want += a.At(i, k) * a.At(j, k)
					abs += math.Abs(a.At(i, k) * a.At(j, k))
				}
				if d := math.Abs(g.At(i, j) - want); d > 2*float64(m+1)*0x1p-52*abs {
					t.Fatalf("%d x %d: Gram[%d,%d] = %v, want %v (bound %g)", n, m, i, j, g.At(i, j), want, 2*float64(m+1)*0x1p-52*abs)
				}
				if g.At(i, j) != g.At(j, i) {
					t.Fatalf("%d x %d: Gram[%d,%d] != Gram[%d,%d]", n, m, i, j, j, i)
				}
			}
		}
	}
}
