package backendplugin

import (
	"fmt"
	"unsafe"

	"gonum.org/v1/gonum/mat"

	pb "github.com/lazyvi/lazyvi/proto/lazyvi/backend/v2"
)

// The transport must not change the arithmetic: a model behind the plugin
// has to give the bits it gives in the caller's process. BLAS kernels choose
// their summation order by the alignment of their operands (OpenBLAS's SSE2
// dgemv, on CPUs without AVX, peels a first element off a row that does not
// start on 16 bytes), so a strided view sent as contiguous rows, or rows
// unpacked at another offset, could be multiplied in another order. A
// request matrix therefore carries its RowLayout, and the server unpacks it
// with every row at the same offset within a 64-byte line as the caller's.
// This assumes what every BLAS kernel we know of satisfies: its arithmetic
// depends on the memory only through the values, the shapes and where
// each row starts within a 64-byte line (the widest vector, AVX-512); not
// on the stride beyond that, nor on page or cache placement.

// lineFloats is the number of float64s in a 64-byte line.
const lineFloats = 8

// phaseOf is where p lies within its 64-byte line, in float64s.
func phaseOf(p *float64) uint32 {
	return uint32(uintptr(unsafe.Pointer(p)) / 8 % lineFloats)
}

// layoutOf is the RowLayout of the non-empty raw matrix.
func layoutOf(raw mat.RawMatrixer) *pb.RowLayout {
	m := raw.RawMatrix()
	return &pb.RowLayout{Phase: phaseOf(&m.Data[0]), Skew: uint32((m.Stride - m.Cols) % lineFloats)}
}

// withLayout returns the contiguous d laid out as l says: d itself when it
// is already (and l is nil, or has no skew and d's phase), else a copy.
func withLayout(d *mat.Dense, l *pb.RowLayout) (*mat.Dense, error) {
	if l == nil {
		return d, nil
	}
	if l.Phase >= lineFloats || l.Skew >= lineFloats {
		return nil, fmt.Errorf("malformed row layout: phase %d, skew %d (want 0..%d)", l.Phase, l.Skew, lineFloats-1)
	}
	r, c := d.Dims()
	if r == 0 || c == 0 {
		return d, nil
	}
	raw := d.RawMatrix()
	if l.Skew == 0 && phaseOf(&raw.Data[0]) == l.Phase {
		return d, nil
	}
	stride := c + int(l.Skew)
	buf := make([]float64, r*stride+lineFloats-1)
	off := 0
	for phaseOf(&buf[off]) != l.Phase {
		off++
	}
	out := mat.NewDense(r, stride, buf[off:off+r*stride]).Slice(0, r, 0, c).(*mat.Dense)
	out.Copy(d)
	return out, nil
}
