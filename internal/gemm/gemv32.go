package gemm

// Gemv32 computes y = alpha A x + beta y for A (m x n, rows lda apart)
// stored in float32 and x, y in float64, on A's values widened to float64
// (exactly), in the order of Dgemv's own kernel at every level (the
// generic one by scalar fused multiply-adds): the result is Dgemv's on the
// widened matrix to the bit at the AVX2 and AVX-512 levels, where Dgemv
// uses that kernel, and not at the generic level, where Dgemv is gonum's.
// It reads half Dgemv's bytes of A, where a product with a matrix held in
// memory waits on them.
// The arguments must fit: len(a) >= lda (m-1) + n, lda >= n, len(x) >= n,
// len(y) >= m.
func Gemv32(m, n int, alpha float64, a []float32, lda int, x []float64, beta float64, y []float64) {
	gemvRows(m, n, alpha, a, lda, x, beta, y)
}
