package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// TestSyrkBits checks Dsyrk and Ssyrk on every fast level, both triangles
// and both transpositions, against the scalar fused multiply-add reference
// of the product S S^T (the package's order, so to the bit) on the
// triangle, with the other triangle left as it was: sizes below and beyond
// one row item, kc steps and a goroutine's share, at GOMAXPROCS 1 to 3,
// alpha and beta as TestBitsMatchScalarFMA takes them.
func TestSyrkBits(t *testing.T) {
	levels := fastLevels()
	if len(levels) == 0 {
		t.Skip("no AVX2+FMA on this CPU or build")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, l := range levels {
		withLevel(t, l, func() {
			// The last four are at least parallelWork (n*n*k) and take
			// consecutive GOMAXPROCS, so that each pair has one split on
			// every level; the last two have the steps (at least 4 kc) of
			// a product whose items run through every step block
			// (runDeep) when split and B is not transposed.
			for i, s := range [][2]int{{40, 30}, {70, 300}, {165, 50}, {2*192 + 5, 9}, {200, 520}, {300, 60}, {70, 1100}, {64, 1500}} {
				n, k := s[0], s[1]
				procs := 1 + (i+int(l))%3
				runtime.GOMAXPROCS(procs)
				for _, tA := range transposes {
					for _, ul := range []blas.Uplo{blas.Upper, blas.Lower} {
						for _, ab := range [][2]float64{{1, 0}, {0.3, -0.7}, {0, 0.5}} {
							name := fmt.Sprintf("%v/%dx%d/%c/%c/alpha=%g,beta=%g/GOMAXPROCS=%d", l, n, k, tA, ul, ab[0], ab[1], procs)
							tB := blas.Trans
							if tA != blas.NoTrans {
								tB = blas.NoTrans
							}
							o64 := newOperands[float64](rng, tA, tB, n, n, k)
							o64.b, o64.ldb = o64.a, o64.lda
							o32 := newOperands[float32](rng, tA, tB, n, n, k)
							o32.b, o32.ldb = o32.a, o32.lda
							if ab[1] == 0 {
								o64.c[0], o32.c[0] = math.NaN(), float32(math.NaN())
							}
							want64 := triangleOf(reference(fma64, o64, ab[0], ab[1]), o64.c, n, o64.ldc, ul)
							want32 := triangleOf(reference(fma32, o32, float32(ab[0]), float32(ab[1])), o32.c, n, o32.ldc, ul)
							Implementation{}.Dsyrk(ul, tA, n, k, ab[0], o64.a, o64.lda, ab[1], o64.c, o64.ldc)
							Implementation{}.Ssyrk(ul, tA, n, k, float32(ab[0]), o32.a, o32.lda, float32(ab[1]), o32.c, o32.ldc)
							checkBits(t, name+"/float64", o64.c, want64)
							checkBits(t, name+"/float32", o32.c, want32)
						}
					}
				}
			}
		})
	}
}

// triangleOf returns full's ul triangle of n x n with stride ld, and old's
// values elsewhere.
func triangleOf[T float](full, old []T, n, ld int, ul blas.Uplo) []T {
	out := append([]T(nil), old...)
	for i := range n {
		for j := range n {
			if (ul == blas.Upper && j >= i) || (ul == blas.Lower && j <= i) {
				out[i*ld+j] = full[i*ld+j]
			}
		}
	}
	return out
}

// TestSyrkGeneric checks that on the generic level, and below syrkMin on
// every level, Dsyrk is gonum's (to the bit: the same routine).
func TestSyrkGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, l := range append([]Level{Generic}, fastLevels()...) {
		withLevel(t, l, func() {
			for _, s := range [][2]int{{10, 5}, {300, 40}} {
				n, k := s[0], s[1]
				if l != Generic && n*n*k >= syrkMin {
					continue
				}
				o := newOperands[float64](rng, blas.NoTrans, blas.Trans, n, n, k)
				want := append([]float64(nil), o.c...)
				Implementation{}.Implementation.Dsyrk(blas.Upper, blas.NoTrans, n, k, 0.5, o.a, o.lda, 2, want, o.ldc)
				Implementation{}.Dsyrk(blas.Upper, blas.NoTrans, n, k, 0.5, o.a, o.lda, 2, o.c, o.ldc)
				checkBits(t, fmt.Sprintf("%v/%dx%d", l, n, k), o.c, want)
			}
		})
	}
}
