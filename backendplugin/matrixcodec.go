package backendplugin

import (
	"errors"

	"gonum.org/v1/gonum/mat"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/lazyvi/lazyvi/internal/linalg"
	pb "github.com/lazyvi/lazyvi/proto/lazyvi/backend/v2"
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
// holds the values (a client's KernelInto), and gramReply a GramResponse
// whose G, an upper triangle read into the whole square, the codec hands
// over as g (nil where the generic unmarshal read the message): the codec
// recognises both.
type matrixInto struct {
	m   *pb.Matrix
	dst []float64
}

type gramReply struct {
	r *pb.GramResponse
	g *mat.SymDense
}

// errGenericMatrix: the message has a field this reader does not decode
// (an unknown one, a malformed tag); the generic unmarshal then reads it
// and reports what is wrong.
var errGenericMatrix = errors.New("not a plain matrix message")

// frames reads a mem.BufferSlice front to back.
type frames struct {
	bufs [][]byte
	i    int    // current buffer
	off  int    // offset in it
	pos  uint64 // bytes read or skipped in all
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
		dst, f.off, f.pos = dst[n:], f.off+n, f.pos+uint64(n)
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
		f.pos += k
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
	_, err := decodeMatrix(f, uint64(data.Len()), m, dst)
	return err
}

// decodeMatrix is unmarshalMatrix on the message of f's bytes up to
// position end; unpacked reports an upper triangle read into the whole
// square.
func decodeMatrix(f *frames, end uint64, m *pb.Matrix, dst []float64) (unpacked bool, err error) {
	var rows, cols int64
	var upper bool
	var handle uint64
	var layout *pb.RowLayout
	var dataAt *frames // where the last data field's bytes start
	var dataLen uint64
	for f.pos < end {
		tag, ok := f.varint()
		if !ok {
			return false, errGenericMatrix
		}
		num, typ := protowire.Number(tag>>3), protowire.Type(tag&7)
		switch {
		case typ == protowire.VarintType && (num == 1 || num == 2 || num == 4 || num == 5):
			v, ok := f.varint()
			if !ok {
				return false, errGenericMatrix
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
			if !ok || n > end-f.pos {
				return false, errGenericMatrix
			}
			if num == 3 {
				at := *f
				dataAt, dataLen = &at, n
				if !f.skip(n) {
					return false, errGenericMatrix
				}
				continue
			}
			b := make([]byte, n)
			if !f.read(b) {
				return false, errGenericMatrix
			}
			layout = new(pb.RowLayout)
			if err := proto.Unmarshal(b, layout); err != nil {
				return false, errGenericMatrix
			}
		default:
			return false, errGenericMatrix
		}
	}
	if f.pos != end {
		return false, errGenericMatrix
	}
	proto.Reset(m)
	m.Rows, m.Cols, m.Upper, m.Handle, m.Layout = rows, cols, upper, handle, layout
	if dataAt != nil {
		m.Data = readValues(dataAt, dataLen, m, dst)
	}
	return upper && !m.Upper, nil
}

// unmarshalGram decodes a GramResponse from its frames into reply: its G
// as decodeMatrix does, an upper triangle into the whole square (then
// reply.g, which uses it in place), its b's bytes into a buffer that
// starts on 8 bytes; or returns errGenericMatrix for the caller to fall
// back on proto.Unmarshal.
func unmarshalGram(data mem.BufferSlice, reply *gramReply) error {
	if !littleEndian {
		return errGenericMatrix
	}
	f := newFrames(data)
	total := uint64(data.Len())
	var g *pb.Matrix
	var b *pb.Vector
	for f.pos < total {
		tag, ok := f.varint()
		if !ok || protowire.Type(tag&7) != protowire.BytesType {
			return errGenericMatrix
		}
		n, ok := f.varint()
		if !ok || n > total-f.pos {
			return errGenericMatrix
		}
		switch protowire.Number(tag >> 3) {
		case 1:
			// A repeated embedded message merges into the first; only a
			// single G is decoded here.
			if g != nil {
				return errGenericMatrix
			}
			g = new(pb.Matrix)
			unpacked, err := decodeMatrix(f, f.pos+n, g, nil)
			if err != nil {
				return err
			}
			if unpacked {
				reply.g = mat.NewSymDense(int(g.Rows), floatsOf(g.Data))
			} else {
				reply.g = nil
			}
		case 2:
			if b != nil {
				return errGenericMatrix
			}
			b = new(pb.Vector)
			if err := decodeVector(f, f.pos+n, b); err != nil {
				return err
			}
		default:
			return errGenericMatrix
		}
	}
	proto.Reset(reply.r)
	reply.r.G, reply.r.B = g, b
	return nil
}

// decodeVector decodes a Vector message of f's bytes up to position end,
// its data into memory that starts on 8 bytes.
func decodeVector(f *frames, end uint64, v *pb.Vector) error {
	var dataAt *frames
	var dataLen uint64
	for f.pos < end {
		tag, ok := f.varint()
		if !ok || tag != uint64(protowire.EncodeTag(1, protowire.BytesType)) {
			return errGenericMatrix
		}
		n, ok := f.varint()
		if !ok || n > end-f.pos {
			return errGenericMatrix
		}
		at := *f
		dataAt, dataLen = &at, n
		if !f.skip(n) {
			return errGenericMatrix
		}
	}
	if f.pos != end {
		return errGenericMatrix
	}
	if dataAt != nil {
		v.Data = readValues(dataAt, dataLen, &pb.Matrix{}, nil)
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
