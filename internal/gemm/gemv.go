package gemm

import (
	"math"

	"gonum.org/v1/gonum/blas"
)

// Dgemv computes y = alpha op(A) x + beta y (float64). At the AVX2 and
// AVX-512 levels the untransposed product with unit increments (the Krylov
// solvers' product with a kernel matrix) runs on an AVX2+FMA kernel that
// takes four rows at a time; the rest is gonum's.
//
// Each y_i is gemvRow's sum: eight partial sums, partial l taking
// a_ij x_j for j = l, l+8, ... (below n rounded down to 8) by fused
// multiply-adds in j order, added in a fixed tree, then the last n mod 8
// terms by fused multiply-adds in order; then y_i = fma(alpha, s, beta
// y_i), beta y_i taken as 0 when beta is 0. The order is the same at every
// level that uses it, so AVX-512 gives AVX2's bits.
func (impl Implementation) Dgemv(tA blas.Transpose, m, n int, alpha float64, a []float64, lda int, x []float64, incX int, beta float64, y []float64, incY int) {
	if active == Generic || tA != blas.NoTrans || incX != 1 || incY != 1 || m == 0 || n == 0 ||
		lda < max(1, n) || len(a) < lda*(m-1)+n || len(x) < n || len(y) < m {
		impl.Implementation.Dgemv(tA, m, n, alpha, a, lda, x, incX, beta, y, incY)
		return
	}
	gemvRows(m, n, alpha, a, lda, x, beta, y)
}

// gemvRows sets y_i = alpha (row_i . x) + beta y_i in Dgemv's order, the
// rows four at a time on the AVX2 kernel (dot4) where the level has it,
// the rest by gemvRow; a float32 A's values are widened to float64
// (exactly) before their multiply-adds.
func gemvRows[T float](m, n int, alpha float64, a []T, lda int, x []float64, beta float64, y []float64) {
	n8 := n &^ 7
	var parts [4 * 8]float64
	i := 0
	if active != Generic {
		for ; i+4 <= m; i += 4 {
			if n8 > 0 {
				dot4(&a[i*lda], lda, &x[0], n8, &parts)
			} else {
				parts = [4 * 8]float64{}
			}
			for r := range 4 {
				y[i+r] = gemvFinish(parts[8*r:8*r+8], a[(i+r)*lda:(i+r)*lda+n], x[:n], n8, alpha, beta, y[i+r])
			}
		}
	}
	for ; i < m; i++ {
		y[i] = gemvRow(a[i*lda:i*lda+n], x[:n], alpha, beta, y[i])
	}
}

// dot4 is dot4AVX2 on A's type.
func dot4[T float](a *T, lda int, x *float64, n8 int, p *[32]float64) {
	switch a := any(a).(type) {
	case *float64:
		dot4AVX2(a, lda, x, n8, p)
	case *float32:
		dot4F32AVX2(a, lda, x, n8, p)
	}
}

// gemvRow is one element of Dgemv's result, in its order, by scalar fused
// multiply-adds: alpha (row . x) + beta y.
func gemvRow[T float](row []T, x []float64, alpha, beta, y float64) float64 {
	n8 := len(row) &^ 7
	var p [8]float64
	for j := 0; j < n8; j++ {
		p[j%8] = math.FMA(float64(row[j]), x[j], p[j%8])
	}
	return gemvFinish(p[:], row, x, n8, alpha, beta, y)
}

// gemvFinish adds the eight partial sums p of row . x's first n8 terms,
// then the remaining terms, and scales: alpha s + beta y.
func gemvFinish[T float](p []float64, row []T, x []float64, n8 int, alpha, beta, y float64) float64 {
	s := ((p[0] + p[4]) + (p[2] + p[6])) + ((p[1] + p[5]) + (p[3] + p[7]))
	for j := n8; j < len(row); j++ {
		s = math.FMA(float64(row[j]), x[j], s)
	}
	v := 0.0
	if beta != 0 {
		v = beta * y
	}
	if alpha == 0 {
		return v
	}
	return math.FMA(alpha, s, v)
}
