package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestGemv32Bits checks Gemv32 at every level, the generic one included,
// to the bit against Dgemv's scalar reference on the float32 matrix
// widened to float64: row counts around the kernel's four, column counts
// around its eight, padded rows, alpha and beta (0 with NaN in y, 1,
// other).
func TestGemv32Bits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for _, l := range append([]Level{Generic}, fastLevels()...) {
		withLevel(t, l, func() {
			gemvShapes(func(m, n, lda int, alpha, beta float64) {
				a64 := randSlice(rng, lda*(m-1)+n)
				a := make([]float32, len(a64))
				for i, v := range a64 {
					a[i] = float32(v)
					a64[i] = float64(a[i])
				}
				x, y := randSlice(rng, n), randSlice(rng, m)
				if beta == 0 {
					y[0] = math.NaN()
				}
				want := gemvReference(m, n, alpha, a64, lda, x, beta, y)
				Gemv32(m, n, alpha, a, lda, x, beta, y)
				checkBits(t, fmt.Sprintf("%v/%dx%d/lda=%d/alpha=%g,beta=%g", l, m, n, lda, alpha, beta), y, want)
			})
		})
	}
}
