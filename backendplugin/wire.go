package backendplugin

import (
	"context"
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/linalg"
	pb "github.com/lazyvi/lazyvi/proto/lazyvi/backend/v2"
)

// toPB packs m row-major, without copying when m is a contiguous
// mat.RawMatrixer (data then aliases m's values, see rawOf). A nil m packs
// as nil (an absent message).
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
			return &pb.Matrix{Rows: int64(r), Cols: int64(c), Data: rawOf(raw.Data[:r*c])}
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
	return &pb.Matrix{Rows: int64(r), Cols: int64(c), Data: rawOf(data)}
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

// values checks that data holds whole float64s, want of them, and returns
// them (see floatsOf).
func values(data []byte, want int64) ([]float64, error) {
	if len(data)%8 != 0 {
		return nil, fmt.Errorf("%d bytes of values are not whole float64s", len(data))
	}
	if int64(len(data)/8) != want {
		return nil, fmt.Errorf("%d values, want %d", len(data)/8, want)
	}
	return floatsOf(data), nil
}

// fromPB unpacks a matrix with data (not a handle's reference), without
// copying its values unless it carries a RowLayout they do not have (then
// a copy is laid out so). An empty matrix (no rows or no columns) unpacks
// as a zero-value *mat.Dense, which gonum treats as empty.
func fromPB(m *pb.Matrix) (*mat.Dense, error) {
	if m == nil {
		return nil, errors.New("missing matrix")
	}
	if m.Rows < 0 || m.Cols < 0 {
		return nil, fmt.Errorf("malformed matrix: %d x %d", m.Rows, m.Cols)
	}
	if m.Upper {
		if m.Rows != m.Cols {
			return nil, fmt.Errorf("malformed matrix: a %d x %d upper triangle", m.Rows, m.Cols)
		}
		v, err := values(m.Data, m.Rows*(m.Rows+1)/2)
		if err != nil {
			return nil, fmt.Errorf("malformed %d x %d upper triangle: %w", m.Rows, m.Cols, err)
		}
		return fullFromUpper(int(m.Rows), v)
	}
	v, err := values(m.Data, m.Rows*m.Cols)
	if err != nil {
		return nil, fmt.Errorf("malformed %d x %d matrix: %w", m.Rows, m.Cols, err)
	}
	if m.Rows == 0 || m.Cols == 0 {
		return &mat.Dense{}, nil
	}
	return withLayout(mat.NewDense(int(m.Rows), int(m.Cols), v), m.Layout)
}

// vec packs v (aliasing it, see rawOf).
func vec(v []float64) *pb.Vector { return &pb.Vector{Data: rawOf(v)} }

// vecOf unpacks a vector; an absent one is empty.
func vecOf(v *pb.Vector) ([]float64, error) {
	b := v.GetData()
	if len(b)%8 != 0 {
		return nil, fmt.Errorf("malformed vector: %d bytes are not whole float64s", len(b))
	}
	return floatsOf(b), nil
}

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

// upperPB packs the upper triangle of the n x n matrix stored row-major in
// data with the given stride, row by row, as Matrix.upper.
func upperPB(data []float64, stride, n int) *pb.Matrix {
	out := make([]float64, 0, n*(n+1)/2)
	for i := 0; i < n; i++ {
		out = append(out, data[i*stride+i:i*stride+n]...)
	}
	return &pb.Matrix{Rows: int64(n), Cols: int64(n), Data: rawOf(out), Upper: true}
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
// whose upper triangle upper holds row by row (upperPB's packing).
func fullFromUpper(n int, upper []float64) (*mat.Dense, error) {
	if n == 0 {
		return &mat.Dense{}, nil
	}
	data := make([]float64, n*n)
	for i, o := 0, 0; i < n; i++ {
		o += copy(data[i*n+i:(i+1)*n], upper[o:o+n-i])
	}
	linalg.MirrorUpper(data, n, n)
	return mat.NewDense(n, n, data), nil
}

// symFromPB unpacks a symmetric matrix sent as its upper triangle
// (Matrix.upper).
func symFromPB(m *pb.Matrix) (*mat.SymDense, error) {
	if m == nil || !m.Upper || m.Rows != m.Cols || m.Rows < 0 {
		return nil, errors.New("malformed symmetric matrix: want an upper triangle")
	}
	n := int(m.Rows)
	upper, err := values(m.Data, int64(n*(n+1)/2))
	if err != nil {
		return nil, fmt.Errorf("malformed %d x %d upper triangle: %w", n, n, err)
	}
	a := mat.NewSymDense(n, nil)
	raw := a.RawSymmetric()
	for i, o := 0, 0; i < n; i++ {
		o += copy(raw.Data[i*raw.Stride+i:i*raw.Stride+n], upper[o:o+n-i])
	}
	return a, nil
}
