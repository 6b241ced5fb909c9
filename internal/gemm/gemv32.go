package gemm

// Gemv32 computes y = alpha A x + beta y for A (m x n, rows lda apart)
// stored in float32 and x, y in float64: Dgemv's order on A's values
// widened to float64 (exactly), so that the result is Dgemv's at the AVX2
// and AVX-512 levels on the widened matrix, to the bit, at every level
// (the generic one by scalar fused multiply-adds). It reads half Dgemv's
// bytes of A, where a product with a matrix held in memory waits on them.
// The arguments must fit: len(a) >= lda (m-1) + n, lda >= n, len(x) >= n,
// len(y) >= m.
func Gemv32(m, n int, alpha float64, a []float32, lda int, x []float64, beta float64, y []float64) {
	gemvRows(m, n, alpha, a, lda, x, beta, y)
}
