package gemm

import "gonum.org/v1/gonum/blas"

// syrkBlock is the number of rows of C that one product of a symmetric
// rank-k update covers: each block row is one general product for the
// part beyond its diagonal block and one for that block, so that the
// triangle is computed with about n*syrkBlock/2 entries to spare instead of
// the full product's n^2/2.
const syrkBlock = 128

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
	syrk(cf, ul == blas.Upper, tA != blas.NoTrans, n, k, alpha, matrix[float64]{data: a, stride: lda}, beta, matrix[float64]{data: c, stride: ldc})
}

// Ssyrk is Dsyrk in float32.
func (impl Implementation) Ssyrk(ul blas.Uplo, tA blas.Transpose, n, k int, alpha float32, a []float32, lda int, beta float32, c []float32, ldc int) {
	_, cf := configs(active)
	if cf == nil || !validSyrk(ul, tA, n, k, len(a), lda, len(c), ldc) || float64(n)*float64(n)*float64(k) < syrkMin {
		impl.Implementation.Ssyrk(ul, tA, n, k, alpha, a, lda, beta, c, ldc)
		return
	}
	syrk(cf, ul == blas.Upper, tA != blas.NoTrans, n, k, alpha, matrix[float32]{data: a, stride: lda}, beta, matrix[float32]{data: c, stride: ldc})
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

// syrk computes the upper (or lower) triangle of C = alpha S S^T + beta C,
// S = op(A) (n x k: A's rows, or its columns where trans), by block rows
// of syrkBlock: the part of a block row beyond its diagonal block is one
// general product into C in place, and the diagonal block one into a
// scratch copy of it, from which only the triangle goes back.
func syrk[T float](cf *config[T], upper, trans bool, n, k int, alpha T, a matrix[T], beta T, c matrix[T]) {
	if n == 0 {
		return
	}
	// rows returns S's rows i.. as op(A) of a product, cols S's rows i..
	// as its op(B) = S_i..^T (k x ...).
	rows := func(i int) matrix[T] {
		if trans {
			return matrix[T]{trans: true, data: a.data[i:], stride: a.stride}
		}
		return matrix[T]{data: a.data[i*a.stride:], stride: a.stride}
	}
	cols := func(i int) matrix[T] {
		if trans {
			return matrix[T]{data: a.data[i:], stride: a.stride}
		}
		return matrix[T]{trans: true, data: a.data[i*a.stride:], stride: a.stride}
	}
	if k == 0 {
		// Only the a.data[i:] views above need k > 0; C = beta C.
		for i := range n {
			lo, hi := i, n
			if !upper {
				lo, hi = 0, i+1
			}
			scale(1, hi-lo, beta, c.data[i*c.stride+lo:], c.stride)
		}
		return
	}
	nb := min(syrkBlock, n)
	buf := make([]T, nb*nb)
	for i0 := 0; i0 < n; i0 += nb {
		b := min(nb, n-i0)
		// The diagonal block, in a copy with both of its triangles C's.
		for r := range b {
			for s := range b {
				i, j := i0+r, i0+s
				if (upper && j < i) || (!upper && j > i) {
					i, j = j, i
				}
				buf[r*b+s] = c.data[i*c.stride+j]
			}
		}
		gemm(cf, &product[T]{m: b, n: b, k: k, alpha: alpha, beta: beta, a: rows(i0), b: cols(i0), c: matrix[T]{data: buf, stride: b}})
		for r := range b {
			lo, hi := r, b
			if !upper {
				lo, hi = 0, r+1
			}
			copy(c.data[(i0+r)*c.stride+i0+lo:(i0+r)*c.stride+i0+hi], buf[r*b+lo:r*b+hi])
		}
		// The rest of the block row (upper) or column (lower).
		if rest := n - i0 - b; rest > 0 {
			if upper {
				gemm(cf, &product[T]{m: b, n: rest, k: k, alpha: alpha, beta: beta, a: rows(i0), b: cols(i0 + b), c: matrix[T]{data: c.data[i0*c.stride+i0+b:], stride: c.stride}})
			} else {
				gemm(cf, &product[T]{m: rest, n: b, k: k, alpha: alpha, beta: beta, a: rows(i0 + b), b: cols(i0), c: matrix[T]{data: c.data[(i0+b)*c.stride+i0:], stride: c.stride}})
			}
		}
	}
}
