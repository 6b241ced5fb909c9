package backendplugin

import (
	"context"
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/pb"
)

// toPB packs m row-major, without copying when m is a contiguous
// mat.RawMatrixer. A nil m packs as nil (an absent message).
func toPB(m mat.Matrix) *pb.Matrix {
	if m == nil {
		return nil
	}
	if d, ok := m.(*mat.Dense); ok && d == nil {
		return nil
	}
	r, c := m.Dims()
	if rm, ok := m.(mat.RawMatrixer); ok && r > 0 && c > 0 {
		if raw := rm.RawMatrix(); raw.Stride == c {
			// Contiguous: alias the data. Marshalling only reads it, and
			// gRPC marshals a unary message before the call returns.
			return &pb.Matrix{Rows: int64(r), Cols: int64(c), Data: raw.Data[:r*c]}
		}
	}
	data := make([]float64, r*c)
	if rm, ok := m.(mat.RawMatrixer); ok {
		raw := rm.RawMatrix()
		for i := 0; i < r; i++ {
			copy(data[i*c:(i+1)*c], raw.Data[i*raw.Stride:i*raw.Stride+c])
		}
	} else {
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				data[i*c+j] = m.At(i, j)
			}
		}
	}
	return &pb.Matrix{Rows: int64(r), Cols: int64(c), Data: data}
}

// requestPB packs the request matrix m as toPB does, with its RowLayout
// when m has raw storage (see layout.go).
func requestPB(m mat.Matrix) *pb.Matrix {
	out := toPB(m)
	if raw, ok := m.(mat.RawMatrixer); ok && out != nil && out.Rows > 0 && out.Cols > 0 {
		out.Layout = layoutOf(raw)
	}
	return out
}

// fromPB unpacks a matrix without copying its data, unless it carries a
// RowLayout its data does not have (then a copy is laid out so). An empty matrix (no rows
// or no columns) unpacks as a zero-value *mat.Dense, which gonum treats as
// empty.
func fromPB(m *pb.Matrix) (*mat.Dense, error) {
	if m == nil {
		return nil, errors.New("missing matrix")
	}
	if m.Upper {
		if m.Rows != m.Cols {
			return nil, fmt.Errorf("malformed matrix: a %d x %d upper triangle", m.Rows, m.Cols)
		}
		return fullFromUpper(int(m.Rows), m.Data)
	}
	if m.Rows < 0 || m.Cols < 0 || int64(len(m.Data)) != m.Rows*m.Cols {
		return nil, fmt.Errorf("malformed matrix: %d x %d with %d values", m.Rows, m.Cols, len(m.Data))
	}
	if m.Rows == 0 || m.Cols == 0 {
		return &mat.Dense{}, nil
	}
	return withLayout(mat.NewDense(int(m.Rows), int(m.Cols), m.Data), m.Layout)
}

func vec(v []float64) *pb.Vector { return &pb.Vector{Data: v} }

// toStatus turns a backend's error into a gRPC status: usage errors become
// InvalidArgument, context errors their codes, the rest Unknown. The message
// is the error's text.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	code := codes.Unknown
	switch {
	case errors.Is(err, framework.ErrUsage):
		code = codes.InvalidArgument
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	}
	return status.Error(code, err.Error())
}

// remoteError is an error reported by the backend in the plugin process,
// rebuilt on lazyvi's side with its message; usage and context errors match
// framework.ErrUsage and the context errors under errors.Is.
type remoteError struct {
	msg  string
	kind error // framework.ErrUsage, context.Canceled, context.DeadlineExceeded or nil
}

func (e *remoteError) Error() string        { return e.msg }
func (e *remoteError) Is(target error) bool { return e.kind != nil && target == e.kind }

// packUpper returns a's upper triangle row by row.
func packUpper(a *mat.SymDense) []float64 {
	raw := a.RawSymmetric()
	return upperRows(raw.Data, raw.Stride, raw.N)
}

// upperRows returns the upper triangle, row by row, of the n x n matrix
// stored row-major in data with the given stride.
func upperRows(data []float64, stride, n int) []float64 {
	out := make([]float64, 0, n*(n+1)/2)
	for i := 0; i < n; i++ {
		out = append(out, data[i*stride+i:i*stride+n]...)
	}
	return out
}

// unpackUpper is packUpper's inverse.
func unpackUpper(n int, upper []float64) (*mat.SymDense, error) {
	if n < 0 || len(upper) != n*(n+1)/2 {
		return nil, fmt.Errorf("malformed symmetric matrix: n %d with %d values", n, len(upper))
	}
	a := mat.NewSymDense(n, nil)
	raw := a.RawSymmetric()
	for i, o := 0, 0; i < n; i++ {
		o += copy(raw.Data[i*raw.Stride+i:i*raw.Stride+n], upper[o:o+n-i])
	}
	return a, nil
}

// upperPB packs the symmetric a (its upper triangle is read) as
// Matrix.upper.
func upperPB(a *mat.Dense) *pb.Matrix {
	n, _ := a.Dims()
	raw := a.RawMatrix()
	return &pb.Matrix{Rows: int64(n), Cols: int64(n), Data: upperRows(raw.Data, raw.Stride, n), Upper: true}
}

// symTile is the side of the square tiles in which exactlySymmetric and
// fullFromUpper visit a matrix and its transpose together: 64 x 64
// float64s are 32 KiB a tile, so both tiles stay in cache while the
// transposed one is read (or written) across its rows. Visited element by
// element, a 1000 x 1000 kernel's transpose cost a cache line a value.
const symTile = 64

// exactlySymmetric reports whether the square, non-empty a equals its
// transpose bit for bit (a NaN anywhere off the diagonal, which equals no
// value, makes it not so).
func exactlySymmetric(a *mat.Dense) bool {
	n, c := a.Dims()
	if n != c || n == 0 {
		return false
	}
	raw := a.RawMatrix()
	for i0 := 0; i0 < n; i0 += symTile {
		for j0 := i0; j0 < n; j0 += symTile {
			for i := i0; i < min(i0+symTile, n); i++ {
				for j := max(j0, i+1); j < min(j0+symTile, n); j++ {
					if raw.Data[i*raw.Stride+j] != raw.Data[j*raw.Stride+i] {
						return false
					}
				}
			}
		}
	}
	return true
}

// fullFromUpper is the n x n symmetric matrix, both triangles filled,
// whose upper triangle upper holds row by row (upperPB's packing): what
// unpackUpper and linalg.Full give, without the SymDense between them.
func fullFromUpper(n int, upper []float64) (*mat.Dense, error) {
	if n < 0 || len(upper) != n*(n+1)/2 {
		return nil, fmt.Errorf("malformed symmetric matrix: n %d with %d values", n, len(upper))
	}
	if n == 0 {
		return &mat.Dense{}, nil
	}
	data := make([]float64, n*n)
	for i, o := 0, 0; i < n; i++ {
		o += copy(data[i*n+i:(i+1)*n], upper[o:o+n-i])
	}
	for i0 := 0; i0 < n; i0 += symTile {
		for j0 := i0; j0 < n; j0 += symTile {
			for i := i0; i < min(i0+symTile, n); i++ {
				for j := max(j0, i+1); j < min(j0+symTile, n); j++ {
					data[j*n+i] = data[i*n+j]
				}
			}
		}
	}
	return mat.NewDense(n, n, data), nil
}
