package backendplugin

import (
	"errors"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/lazyvi/lazyvi/internal/linalg"
	"github.com/lazyvi/lazyvi/internal/pb"
)

// A reply that is a Matrix (a kernel, a Jacobian, predictions) is read
// straight from gRPC's received frames into its values' final memory.
// The generic path copies a 1000 x 1000 kernel three times on arrival: the
// frames into one buffer, that buffer's bytes field into a fresh one
// (proto.Unmarshal), and the upper triangle into the whole square
// (fromPB). Here the values are copied once, a triangle into its place in
// the square, whose other half is then mirrored; the message then holds
// the whole square (Upper false), which fromPB reads in place.

// matrixInto is a Matrix reply to be read into dst's memory where it
// holds the values (a client's KernelInto): the codec recognises it.
type matrixInto struct {
	m   *pb.Matrix
	dst []float64
}

// errGenericMatrix: the message has a field this reader does not decode
// (an unknown one, a malformed tag); the generic unmarshal then reads it
// and reports what is wrong.
var errGenericMatrix = errors.New("not a plain matrix message")

// frames reads a mem.BufferSlice front to back.
type frames struct {
	bufs [][]byte
	i    int // current buffer
	off  int // offset in it
}

func newFrames(data mem.BufferSlice) *frames {
	f := &frames{bufs: make([][]byte, 0, len(data))}
	for _, b := range data {
		if d := b.ReadOnlyData(); len(d) > 0 {
			f.bufs = append(f.bufs, d)
		}
	}
	return f
}

func (f *frames) done() bool { return f.i == len(f.bufs) }

// read fills dst from the frames, reporting whether they held enough.
func (f *frames) read(dst []byte) bool {
	for len(dst) > 0 {
		if f.done() {
			return false
		}
		n := copy(dst, f.bufs[f.i][f.off:])
		dst, f.off = dst[n:], f.off+n
		if f.off == len(f.bufs[f.i]) {
			f.i, f.off = f.i+1, 0
		}
	}
	return true
}

// skip passes n bytes.
func (f *frames) skip(n uint64) bool {
	for n > 0 {
		if f.done() {
			return false
		}
		k := min(n, uint64(len(f.bufs[f.i])-f.off))
		n -= k
		f.off += int(k)
		if f.off == len(f.bufs[f.i]) {
			f.i, f.off = f.i+1, 0
		}
	}
	return true
}

// varint reads a base-128 varint.
func (f *frames) varint() (uint64, bool) {
	var v uint64
	for s := 0; s < 64; s += 7 {
		var b [1]byte
		if !f.read(b[:]) {
			return 0, false
		}
		v |= uint64(b[0]&0x7f) << s
		if b[0] < 0x80 {
			return v, true
		}
	}
	return 0, false
}

// unmarshalMatrix decodes a Matrix message from its frames (see above),
// its values into dst's memory when it holds them (nil: fresh memory), or
// returns errGenericMatrix for the caller to fall back on proto.Unmarshal.
// Protobuf's last-one-wins rule holds for every field.
func unmarshalMatrix(data mem.BufferSlice, m *pb.Matrix, dst []float64) error {
	if !littleEndian {
		return errGenericMatrix
	}
	f := newFrames(data)
	var rows, cols int64
	var upper bool
	var handle uint64
	var layout *pb.RowLayout
	var dataAt *frames // where the last data field's bytes start
	var dataLen uint64
	for !f.done() {
		tag, ok := f.varint()
		if !ok {
			return errGenericMatrix
		}
		num, typ := protowire.Number(tag>>3), protowire.Type(tag&7)
		switch {
		case typ == protowire.VarintType && (num == 1 || num == 2 || num == 4 || num == 5):
			v, ok := f.varint()
			if !ok {
				return errGenericMatrix
			}
			switch num {
			case 1:
				rows = int64(v)
			case 2:
				cols = int64(v)
			case 4:
				upper = v != 0
			case 5:
				handle = v
			}
		case typ == protowire.BytesType && (num == 3 || num == 6):
			n, ok := f.varint()
			if !ok {
				return errGenericMatrix
			}
			if num == 3 {
				at := *f
				dataAt, dataLen = &at, n
				if !f.skip(n) {
					return errGenericMatrix
				}
				continue
			}
			b := make([]byte, n)
			if !f.read(b) {
				return errGenericMatrix
			}
			layout = new(pb.RowLayout)
			if err := proto.Unmarshal(b, layout); err != nil {
				return errGenericMatrix
			}
		default:
			return errGenericMatrix
		}
	}
	proto.Reset(m)
	m.Rows, m.Cols, m.Upper, m.Handle, m.Layout = rows, cols, upper, handle, layout
	if dataAt != nil {
		m.Data = readValues(dataAt, dataLen, m, dst)
	}
	return nil
}

// readValues reads the data field's n bytes from f: into the whole n x n
// square when the message is a well-formed upper triangle (which m then
// no longer is), else into a buffer that starts on 8 bytes, so that fromPB
// reads the values in place: dst's memory when its capacity holds them,
// else fresh memory.
func readValues(f *frames, n uint64, m *pb.Matrix, dst []float64) []byte {
	floats := func(k int) []float64 {
		if cap(dst) >= k {
			return dst[:k]
		}
		return make([]float64, k)
	}
	if r := m.Rows; m.Upper && r > 0 && r == m.Cols && n == uint64(8*(r*(r+1)/2)) {
		k := int(r)
		full := floats(k * k)
		for i := 0; i < k; i++ {
			f.read(rawOf(full[i*k+i : (i+1)*k]))
		}
		linalg.MirrorUpper(full, k, k)
		m.Upper = false
		return rawOf(full)
	}
	if n%8 == 0 {
		b := rawOf(floats(int(n / 8)))
		f.read(b)
		return b
	}
	b := make([]byte, n)
	f.read(b)
	return b
}
