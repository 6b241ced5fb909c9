package gemm

import "gonum.org/v1/gonum/blas"

// syrkMin is the smallest n*n*k that a symmetric rank-k update runs on the
// micro-kernels; below it gonum's own is as fast.
const syrkMin = 1 << 15

// Dsyrk computes C = alpha A A^T + beta C (tA NoTrans, A n x k) or
// C = alpha A^T A + beta C (tA Trans, A k x n) on the ul triangle of the
// symmetric C, leaving the other triangle as it is. On the micro-kernels
// each element of the triangle is what Dgemm gives for it, in Dgemm's
// order (see the package's summation order).
func (impl Implementation) Dsyrk(ul blas.Uplo, tA blas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	cf, _ := configs(active)
	if cf == nil || !validSyrk(ul, tA, n, k, len(a), lda, len(c), ldc) || float64(n)*float64(n)*float64(k) < syrkMin {
		impl.Implementation.Dsyrk(ul, tA, n, k, alpha, a, lda, beta, c, ldc)
		return
	}
	syrk(cf, ul, tA != blas.NoTrans, n, k, alpha, matrix[float64]{data: a, stride: lda}, beta, matrix[float64]{data: c, stride: ldc})
}

// Ssyrk is Dsyrk in float32.
func (impl Implementation) Ssyrk(ul blas.Uplo, tA blas.Transpose, n, k int, alpha float32, a []float32, lda int, beta float32, c []float32, ldc int) {
	_, cf := configs(active)
	if cf == nil || !validSyrk(ul, tA, n, k, len(a), lda, len(c), ldc) || float64(n)*float64(n)*float64(k) < syrkMin {
		impl.Implementation.Ssyrk(ul, tA, n, k, alpha, a, lda, beta, c, ldc)
		return
	}
	syrk(cf, ul, tA != blas.NoTrans, n, k, alpha, matrix[float32]{data: a, stride: lda}, beta, matrix[float32]{data: c, stride: ldc})
}

// validSyrk reports whether gonum's Dsyrk and Ssyrk accept the arguments
// (they panic otherwise, and the fallback keeps their messages): A has
// aLen values with leading dimension lda, C cLen with ldc.
func validSyrk(ul blas.Uplo, tA blas.Transpose, n, k, aLen, lda, cLen, ldc int) bool {
	if ul != blas.Upper && ul != blas.Lower {
		return false
	}
	aRows, aCols := n, k
	switch tA {
	case blas.NoTrans:
	case blas.Trans, blas.ConjTrans:
		aRows, aCols = k, n
	default:
		return false
	}
	if n < 0 || k < 0 || lda < max(1, aCols) || ldc < max(1, n) {
		return false
	}
	if n == 0 {
		return true
	}
	return (aRows == 0 || aLen >= (aRows-1)*lda+aCols) && cLen >= (n-1)*ldc+n
}

// syrk computes the ul triangle of C = alpha S S^T + beta C, S = op(A)
// (n x k: A's rows, or its columns where trans), as one product restricted
// to that triangle: each packed panel of S and S^T serves every tile of
// the triangle it meets, tiles outside it are skipped and those across the
// diagonal run in scratch, so that the triangle costs about n^2 k flops
// (plus the diagonal tiles' other halves) instead of the square's 2 n^2 k.
func syrk[T float](cf *config[T], ul blas.Uplo, trans bool, n, k int, alpha T, a matrix[T], beta T, c matrix[T]) {
	pt := upper
	if ul == blas.Lower {
		pt = lower
	}
	// S as op(A) of the product is A's rows, or its columns where trans;
	// S^T as op(B) the same storage read the other way.
	p := product[T]{m: n, n: n, k: k, alpha: alpha, beta: beta, c: c, part: pt,
		a: matrix[T]{trans: trans, data: a.data, stride: a.stride},
		b: matrix[T]{trans: !trans, data: a.data, stride: a.stride}}
	gemm(cf, &p)
}
