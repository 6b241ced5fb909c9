package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// gemvReference is Dgemv's documented order by scalar fused multiply-adds,
// written out element by element.
func gemvReference(m, n int, alpha float64, a []float64, lda int, x []float64, beta float64, y []float64) []float64 {
	out := append([]float64(nil), y...)
	n8 := n - n%8
	for i := range m {
		var p [8]float64
		for j := range n8 {
			p[j%8] = math.FMA(a[i*lda+j], x[j], p[j%8])
		}
		s := ((p[0] + p[4]) + (p[2] + p[6])) + ((p[1] + p[5]) + (p[3] + p[7]))
		for j := n8; j < n; j++ {
			s = math.FMA(a[i*lda+j], x[j], s)
		}
		v := 0.0
		if beta != 0 {
			v = beta * y[i]
		}
		if alpha != 0 {
			v = math.FMA(alpha, s, v)
		}
		out[i] = v
	}
	return out
}

// TestGemvBits checks Dgemv's untransposed product on every fast level to
// the bit against the scalar reference: row counts around the kernel's
// four, column counts around its eight, padded rows, alpha and beta (0
// with NaN in y, 1, other); the transposed product is gonum's.
func TestGemvBits(t *testing.T) {
	levels := fastLevels()
	if len(levels) == 0 {
		t.Skip("no AVX2+FMA on this CPU or build")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, l := range levels {
		withLevel(t, l, func() {
			gemvShapes(func(m, n, lda int, alpha, beta float64) {
				a := randSlice(rng, lda*(m-1)+n)
				x, y := randSlice(rng, n), randSlice(rng, m)
				if beta == 0 {
					y[0] = math.NaN()
				}
				want := gemvReference(m, n, alpha, a, lda, x, beta, y)
				Implementation{}.Dgemv(blas.NoTrans, m, n, alpha, a, lda, x, 1, beta, y, 1)
				checkBits(t, fmt.Sprintf("%v/%dx%d/lda=%d/alpha=%g,beta=%g", l, m, n, lda, alpha, beta), y, want)

				yt, xt := randSlice(rng, n), randSlice(rng, m)
				wantT := append([]float64(nil), yt...)
				gonum.Implementation{}.Dgemv(blas.Trans, m, n, alpha, a, lda, xt, 1, beta, wantT, 1)
				Implementation{}.Dgemv(blas.Trans, m, n, alpha, a, lda, xt, 1, beta, yt, 1)
				checkBits(t, fmt.Sprintf("%v/T/%dx%d", l, m, n), yt, wantT)
			})
		})
	}
}

// gemvShapes calls f on the shapes the gemv tests check: row counts around
// the kernel's four, column counts around its eight, rows unpadded and
// padded, and alpha, beta pairs with beta 0, 1 and other.
func gemvShapes(f func(m, n, lda int, alpha, beta float64)) {
	for _, m := range []int{1, 3, 4, 5, 8, 13, 101} {
		for _, n := range []int{1, 7, 8, 9, 16, 33, 300} {
			for _, pad := range []int{0, 3} {
				for _, ab := range [][2]float64{{1, 0}, {0.3, -0.7}, {0, 0.5}, {-2, 1}} {
					f(m, n, n+pad, ab[0], ab[1])
				}
			}
		}
	}
}

// TestGemvAccuracy bounds the fast product's error against gonum's at a
// kernel's size: both are sums of n products, within n eps of the sum of
// the terms' magnitudes.
func TestGemvAccuracy(t *testing.T) {
	if len(fastLevels()) == 0 {
		t.Skip("no AVX2+FMA on this CPU or build")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	const m, n = 64, 1337
	a, x := randSlice(rng, m*n), randSlice(rng, n)
	got, want := make([]float64, m), make([]float64, m)
	Implementation{}.Dgemv(blas.NoTrans, m, n, 1, a, n, x, 1, 0, got, 1)
	gonum.Implementation{}.Dgemv(blas.NoTrans, m, n, 1, a, n, x, 1, 0, want, 1)
	for i := range m {
		mag := 0.0
		for j := range n {
			mag += math.Abs(a[i*n+j] * x[j])
		}
		if d := math.Abs(got[i] - want[i]); d > 2*n*0x1p-53*mag {
			t.Fatalf("row %d: %v against gonum's %v (bound %g)", i, got[i], want[i], 2*n*0x1p-53*mag)
		}
	}
}

func randSlice(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

// BenchmarkGemv: a Krylov step's product with a 1334 x 1334 kernel (the
// README tour's dense dual path), at the active level and gonum's.
func BenchmarkGemv(b *testing.B) {
	for _, n := range []int{300, 600, 1334} {
		rng := rand.New(rand.NewPCG(1, 2))
		a, x, y := randSlice(rng, n*n), randSlice(rng, n), make([]float64, n)
		for _, impl := range []struct {
			name string
			blas interface {
				Dgemv(blas.Transpose, int, int, float64, []float64, int, []float64, int, float64, []float64, int)
			}
		}{{"gonum", gonum.Implementation{}}, {active.String(), Implementation{}}} {
			b.Run(fmt.Sprintf("%s/%d", impl.name, n), func(b *testing.B) {
				for b.Loop() {
					impl.blas.Dgemv(blas.NoTrans, n, n, 1, a, n, x, 1, 0, y, 1)
				}
				b.ReportMetric(2*float64(n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
