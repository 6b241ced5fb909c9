package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// benchShapes are the products the lazy estimator and training run: the
// gradient features at highdim n 10000 (6667 rows of a width-200 layer
// from 100), a width-50 network's at n 2000, Phi^T u's first layer at
// highdim n 10000 (TN: 200 x 100 over k = 6667) and of a (512, 256)
// network on 20000 rows (TN: 512 x 100 over k = 20000, A packed from its
// transpose), and a square 1000^3.
var benchShapes = [][3]int{{6667, 100, 200}, {1333, 50, 100}, {200, 6667, 100}, {512, 20000, 100}, {1000, 1000, 1000}}

// benchCases are the transposition cases the backends use: NN (forward
// and kernel products), NT (forward on stored weights, tangents) and TN
// (weight gradients, with k the batch's rows).
var benchCases = []struct {
	name   string
	tA, tB blas.Transpose
}{{"NN", blas.NoTrans, blas.NoTrans}, {"NT", blas.NoTrans, blas.Trans}, {"TN", blas.Trans, blas.NoTrans}}

// BenchmarkGemm runs gonum's Dgemm and Sgemm and this package's at every
// level the CPU has, side by side, reporting GFLOP/s (2 m n k flops a
// product).
func BenchmarkGemm(b *testing.B) {
	levels := append([]Level{Generic}, fastLevels()...)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, s := range benchShapes {
		m, k, n := s[0], s[1], s[2]
		for _, tc := range benchCases {
			o64 := newOperands[float64](rng, tc.tA, tc.tB, m, n, k)
			o32 := newOperands[float32](rng, tc.tA, tc.tB, m, n, k)
			for _, l := range levels {
				name := fmt.Sprintf("%dx%dx%d/%s/%v", m, k, n, tc.name, l)
				b.Run(name+"/float64", func(b *testing.B) {
					run := func() {
						Implementation{}.Dgemm(tc.tA, tc.tB, m, n, k, 1, o64.a, o64.lda, o64.b, o64.ldb, 0, o64.c, o64.ldc)
					}
					if l == Generic {
						run = func() {
							gonum.Implementation{}.Dgemm(tc.tA, tc.tB, m, n, k, 1, o64.a, o64.lda, o64.b, o64.ldb, 0, o64.c, o64.ldc)
						}
					}
					benchLevel(b, l, 2*float64(m)*float64(n)*float64(k), run)
				})
				b.Run(name+"/float32", func(b *testing.B) {
					run := func() {
						Implementation{}.Sgemm(tc.tA, tc.tB, m, n, k, 1, o32.a, o32.lda, o32.b, o32.ldb, 0, o32.c, o32.ldc)
					}
					if l == Generic {
						run = func() {
							gonum.Implementation{}.Sgemm(tc.tA, tc.tB, m, n, k, 1, o32.a, o32.lda, o32.b, o32.ldb, 0, o32.c, o32.ldc)
						}
					}
					benchLevel(b, l, 2*float64(m)*float64(n)*float64(k), run)
				})
			}
		}
	}
}

func benchLevel(b *testing.B, l Level, flops float64, run func()) {
	saved := active
	active = l
	defer func() { active = saved }()
	for b.Loop() {
		run()
	}
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
