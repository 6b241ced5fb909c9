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
		copy(out.Data[i*n+i:(i+1)*n], raw.Data[i*raw.Stride+i:i*raw.Stride+n])
	}
	MirrorUpper(out.Data, n, n)
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
// a block's share of a row), several times faster.
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
	MirrorUpper(or.Data, n, or.Stride)
	return out
}

// symTile is the side of the square tiles in which MirrorUpper visits a
// matrix and its transpose together: 64 x 64 float64s are 32 KiB a tile,
// so both stay in cache while the transposed one is written across its
// rows (element by element, a 1000 x 1000 matrix's transpose costs a cache
// line a value).
const symTile = 64

// MirrorUpper copies the upper triangle of the n x n row-major matrix in
// data (rows stride apart) onto its lower one.
func MirrorUpper(data []float64, n, stride int) {
	for i0 := 0; i0 < n; i0 += symTile {
		for j0 := i0; j0 < n; j0 += symTile {
			for i := i0; i < min(i0+symTile, n); i++ {
				for j := max(j0, i+1); j < min(j0+symTile, n); j++ {
					data[j*stride+i] = data[i*stride+j]
				}
			}
		}
	}
}

// SymmetrizeSquare replaces the n x n row-major matrix in data (rows
// stride apart) by its symmetric part, (A + A^T) / 2, each pair of
// entries once: 0.5 (a_ij + a_ji), in tiles as MirrorUpper visits them. An
// exactly symmetric matrix is left as it is.
func SymmetrizeSquare(data []float64, n, stride int) {
	SymmetrizeSquare32(data, n, stride, nil)
}

// SymmetrizeSquare32 is SymmetrizeSquare, and where out is not nil it
// writes each value of the symmetric part, rounded to float32, to the same
// place in out (laid out as data: rows stride apart), in the same pass.
func SymmetrizeSquare32(data []float64, n, stride int, out []float32) {
	for i0 := 0; i0 < n; i0 += symTile {
		for j0 := i0; j0 < n; j0 += symTile {
			for i := i0; i < min(i0+symTile, n); i++ {
				if out != nil && j0 == i0 {
					out[i*stride+i] = float32(data[i*stride+i])
				}
				for j := max(j0, i+1); j < min(j0+symTile, n); j++ {
					v := 0.5 * (data[i*stride+j] + data[j*stride+i])
					data[i*stride+j], data[j*stride+i] = v, v
					if out != nil {
						out[i*stride+j], out[j*stride+i] = float32(v), float32(v)
					}
				}
			}
		}
	}
}
