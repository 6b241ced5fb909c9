package linalg

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Full returns the symmetric a as a Dense with both triangles filled from
// a's upper triangle (gonum's SymDense stores only that one).
func Full(a *mat.SymDense) *mat.Dense {
	n := a.SymmetricDim()
	if n == 0 {
		return &mat.Dense{}
	}
	raw := a.RawSymmetric()
	d := mat.NewDense(n, n, nil)
	out := d.RawMatrix()
	for i := 0; i < n; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+n]
		copy(out.Data[i*n+i:(i+1)*n], row[i:])
		for j := i + 1; j < n; j++ {
			out.Data[j*n+i] = row[j]
		}
	}
	return d
}

// gramBlock is the number of rows of a's that one matrix product of Gram
// covers: large enough for the product's blocking, small enough that the
// products below the diagonal it also computes stay a small share.
const gramBlock = 256

// Gram returns a a^T (n x n, both triangles filled) for a of n rows. It
// computes the upper triangle by blocks of rows with one general matrix
// product each (blas64.Gemm: blocked and, in gonum's build, parallel)
// rather than the rank-k update Dsyrk, which gonum runs as one dot product
// per entry: the same n^2 m flops (plus the diagonal blocks' lower halves,
// under 10% at n 3000) several times faster (the lazy estimator's
// kernel for 10 outputs of a 7510-parameter network on 300 rows: 3000 x
// 3000 from 3000 x 7510).
func Gram(a *mat.Dense) *mat.Dense {
	n, m := a.Dims()
	if n == 0 {
		return &mat.Dense{}
	}
	out := mat.NewDense(n, n, nil)
	ar, or := a.RawMatrix(), out.RawMatrix()
	for i0 := 0; i0 < n; i0 += gramBlock {
		i1 := min(i0+gramBlock, n)
		rows := blas64.General{Rows: i1 - i0, Cols: m, Stride: ar.Stride, Data: ar.Data[i0*ar.Stride:]}
		cols := blas64.General{Rows: n - i0, Cols: m, Stride: ar.Stride, Data: ar.Data[i0*ar.Stride:]}
		dst := blas64.General{Rows: i1 - i0, Cols: n - i0, Stride: or.Stride, Data: or.Data[i0*or.Stride+i0:]}
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, rows, cols, 0, dst)
	}
	// Mirror the upper triangle into the lower.
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			or.Data[j*or.Stride+i] = or.Data[i*or.Stride+j]
		}
	}
	return out
}
