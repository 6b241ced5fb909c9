package gemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestPackTransposed checks the vector transposes of A's panels (6 rows
// for the AVX2 micro-kernels, 12 for the AVX-512 ones) and of the AVX2
// kernels' B panels from a transposed B (16 float32 or 8 float64 columns)
// against their definition, dst[l*mr+r] = src[r*lda+l], for step counts
// around the transposes' four, and that nothing past the panel is
// written.
func TestPackTransposed(t *testing.T) {
	if !haveKernels {
		t.Skip("no AVX2 kernels in this build")
	}
	checkPackTransposed[float32](t, 6, 12, 16)
	checkPackTransposed[float64](t, 6, 8, 12)
}

func checkPackTransposed[T float](t *testing.T, widths ...int) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, mr := range widths {
		for _, kb := range []int{4, 5, 7, 8, 13, 64, 255} {
			lda := kb + 3
			src := make([]T, (mr-1)*lda+kb)
			for i := range src {
				src[i] = T(rng.NormFloat64())
			}
			const guard = 8
			dst := make([]T, kb*mr+guard)
			for i := range dst {
				dst[i] = T(math.NaN())
			}
			if !packTransposed(dst[:kb*mr], src, lda, kb, mr) {
				t.Fatalf("mr %d, kb %d: not packed", mr, kb)
			}
			for l := range kb {
				for r := range mr {
					if got, want := dst[l*mr+r], src[r*lda+l]; got != want {
						t.Fatalf("%T, mr %d, kb %d: step %d row %d: %v, want %v", got, mr, kb, l, r, got, want)
					}
				}
			}
			for i := kb * mr; i < len(dst); i++ {
				if v := dst[i]; v == v {
					t.Fatalf("%T, mr %d, kb %d: wrote %v past the panel at %d", v, mr, kb, v, i)
				}
			}
		}
	}
}
