// Package gemm is gonum's BLAS with faster general matrix products: Dgemm
// and Sgemm run a packed, cache-blocked GEMM on AVX2+FMA or AVX-512
// micro-kernels (Go assembly, no cgo) where the CPU has them, on both
// operands' transpositions, and split large products across goroutines.
// Every other routine, and Dgemm and Sgemm on CPUs without AVX2 and FMA,
// is gonum's own.
//
// Each element of C is computed in one fixed order whatever the shape, the
// blocking, the CPU's vector width and the number of goroutines:
// c = beta*c, then c = fma(alpha*a_l, b_l, c) for l = 0, ..., k-1, each
// operation rounded once. The AVX2 and AVX-512 levels therefore give the
// same bits; the generic level (gonum's kernels) rounds differently. The
// environment variable LAZYVI_CPU (generic, avx2, avx512) caps the level,
// for tests of every path on one machine.
package gemm

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Implementation is gonum's BLAS implementation with Dgemm and Sgemm on
// the micro-kernels of the active level.
type Implementation struct{ gonum.Implementation }

// Dgemm computes C = alpha op(A) op(B) + beta C (float64).
func (impl Implementation) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	cf, _ := configs(active)
	if cf == nil || !valid(tA, tB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc) {
		// gonum's Dgemm, which also panics with its message on a bad argument.
		impl.Implementation.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	if m == 0 || n == 0 {
		return
	}
	gemm(cf, tA != blas.NoTrans, tB != blas.NoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Sgemm computes C = alpha op(A) op(B) + beta C (float32).
func (impl Implementation) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	_, cf := configs(active)
	if cf == nil || !valid(tA, tB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc) {
		impl.Implementation.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	if m == 0 || n == 0 {
		return
	}
	gemm(cf, tA != blas.NoTrans, tB != blas.NoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// valid reports whether gonum's Dgemm and Sgemm accept the arguments (they
// panic otherwise): known transpositions, non-negative sizes, leading
// dimensions at least the rows' lengths and slices long enough.
func valid(tA, tB blas.Transpose, m, n, k, la, lda, lb, ldb, lc, ldc int) bool {
	transOK := func(t blas.Transpose) bool {
		return t == blas.NoTrans || t == blas.Trans || t == blas.ConjTrans
	}
	if !transOK(tA) || !transOK(tB) || m < 0 || n < 0 || k < 0 {
		return false
	}
	// Rows and row length of A and B as stored.
	aRows, aLen := m, k
	if tA != blas.NoTrans {
		aRows, aLen = k, m
	}
	bRows, bLen := k, n
	if tB != blas.NoTrans {
		bRows, bLen = n, k
	}
	if lda < max(1, aLen) || ldb < max(1, bLen) || ldc < max(1, n) {
		return false
	}
	if m == 0 || n == 0 {
		return true
	}
	return la >= (aRows-1)*lda+aLen && lb >= (bRows-1)*ldb+bLen && lc >= (m-1)*ldc+n
}
