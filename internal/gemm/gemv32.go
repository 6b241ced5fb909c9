package gemm

import "math"

// Gemv32 computes y = alpha A x + beta y for A (m x n, rows lda apart)
// stored in float32 and x, y in float64: Dgemv's order on A's values
// widened to float64 (exactly), so that the result is Dgemv's at the AVX2
// and AVX-512 levels on the widened matrix, to the bit, at every level
// (the generic one by scalar fused multiply-adds). It reads half Dgemv's
// bytes of A, where a product with a matrix held in memory waits on them.
// The arguments must fit: len(a) >= lda (m-1) + n, lda >= n, len(x) >= n,
// len(y) >= m.
func Gemv32(m, n int, alpha float64, a []float32, lda int, x []float64, beta float64, y []float64) {
	n8 := n &^ 7
	var parts [4 * 8]float64
	i := 0
	if active != Generic {
		for ; i+4 <= m; i += 4 {
			if n8 > 0 {
				dot4F32AVX2(&a[i*lda], lda, &x[0], n8, &parts)
			} else {
				parts = [4 * 8]float64{}
			}
			for r := range 4 {
				y[i+r] = gemv32Finish(parts[8*r:8*r+8], a[(i+r)*lda:(i+r)*lda+n], x[:n], n8, alpha, beta, y[i+r])
			}
		}
	}
	for ; i < m; i++ {
		row := a[i*lda : i*lda+n]
		var p [8]float64
		for j := 0; j < n8; j++ {
			p[j%8] = math.FMA(float64(row[j]), x[j], p[j%8])
		}
		y[i] = gemv32Finish(p[:], row, x[:n], n8, alpha, beta, y[i])
	}
}

// gemv32Finish is gemvFinish on a float32 row.
func gemv32Finish(p []float64, row []float32, x []float64, n8 int, alpha, beta, y float64) float64 {
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
