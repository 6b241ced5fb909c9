package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// BenchmarkGemmSmall times square Dgemm products of side 1 to 64, gonum's
// beside the active level's: what packing costs where there is little to
// compute.
func BenchmarkGemmSmall(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, s := range []int{1, 4, 8, 16, 32, 64} {
		o := newOperands[float64](rng, blas.NoTrans, blas.NoTrans, s, s, s)
		b.Run(fmt.Sprintf("%d/gonum", s), func(b *testing.B) {
			for b.Loop() {
				gonum.Implementation{}.Dgemm(blas.NoTrans, blas.NoTrans, s, s, s, 1, o.a, o.lda, o.b, o.ldb, 0, o.c, o.ldc)
			}
		})
		b.Run(fmt.Sprintf("%d/%v", s, active), func(b *testing.B) {
			for b.Loop() {
				Implementation{}.Dgemm(blas.NoTrans, blas.NoTrans, s, s, s, 1, o.a, o.lda, o.b, o.ldb, 0, o.c, o.ldc)
			}
		})
	}
}
