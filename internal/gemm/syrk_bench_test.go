package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// syrkBenchShapes are the symmetric rank-k updates the lazy estimator's
// primal path runs: the mlp's Gram adds the Jacobian of a 401-parameter
// network to G 256 rows at a time (C = A^T A, A 256 x 401), beside whole
// fold blocks of 667 and 1333 rows, and a Gram of 1000 rows of 700 (C =
// A A^T).
var syrkBenchShapes = []struct {
	tA   blas.Transpose
	n, k int
}{{blas.Trans, 401, 256}, {blas.Trans, 401, 667}, {blas.Trans, 401, 1333}, {blas.NoTrans, 1000, 700}}

// BenchmarkSyrk runs gonum's Dsyrk, this package's Dsyrk and this
// package's Dgemm of the full square C = op(A) op(A)^T on the upper
// triangle, side by side, at the active level. All three report GFLOP/s
// counting n^2 k flops, the triangle's (n(n+1)/2 entries of 2k flops,
// rounded): Dgemm's figure is thus half its own rate, and a Dsyrk with the
// same figure takes as long as the full product.
func BenchmarkSyrk(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, s := range syrkBenchShapes {
		n, k, tA := s.n, s.k, s.tA
		a := make([]float64, n*k)
		for i := range a {
			a[i] = 2*rng.Float64() - 1
		}
		c := make([]float64, n*n)
		lda, tB := k, blas.Trans
		if tA != blas.NoTrans {
			lda, tB = n, blas.NoTrans
		}
		flops := float64(n) * float64(n) * float64(k)
		name := fmt.Sprintf("%c/n=%d/k=%d", tA, n, k)
		run := map[string]func(){
			"gonum": func() { gonum.Implementation{}.Dsyrk(blas.Upper, tA, n, k, 1, a, lda, 1, c, n) },
			"syrk":  func() { Implementation{}.Dsyrk(blas.Upper, tA, n, k, 1, a, lda, 1, c, n) },
			"gemm":  func() { Implementation{}.Dgemm(tA, tB, n, n, k, 1, a, lda, a, lda, 1, c, n) },
		}
		for _, r := range []string{"gonum", "syrk", "gemm"} {
			b.Run(name+"/"+r, func(b *testing.B) {
				clear(c)
				for b.Loop() {
					run[r]()
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
